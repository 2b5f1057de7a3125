// The test SMTP server survives what crash tests do to it: a client that resets its connection in
// the middle of a message (as a process killed with SIGKILL does when data is unread) is counted as
// dropped, never thrown in the test process.
import { connect } from 'node:net';
import { startSmtpServer } from './smtp-server';

it('counts a client reset mid-message as dropped and keeps serving', async () => {
  const smtp = await startSmtpServer();
  try {
    smtp.hold();
    const socket = connect(smtp.port, '127.0.0.1');
    socket.on('error', () => undefined);
    const lines = ['EHLO crash.test', 'MAIL FROM:<a@crash.test>', 'RCPT TO:<b@crash.test>', 'DATA', 'Subject: cut\r\n\r\nshort\r\n.'];
    // One line per reply: the greeting answers nothing, then each reply lets the next line go.
    let replies = 0;
    let sent = 0;
    await new Promise<void>((resolve) => {
      socket.on('data', (chunk) => {
        replies += chunk.toString().split('\r\n').filter((l) => /^\d{3} /.test(l)).length;
        while (sent < replies && sent < lines.length) socket.write(`${lines[sent++]}\r\n`);
        if (sent === lines.length) resolve();
      });
    });
    await smtp.holding(1);
    socket.resetAndDestroy();
    await new Promise((r) => setTimeout(r, 300));
    smtp.release();
    await new Promise((r) => setTimeout(r, 400));
    expect(smtp.dropped).toBe(1);
    expect(smtp.received).toHaveLength(0);
    expect(smtp.serverErrors).toEqual([]);
  } finally {
    await smtp.close();
  }
});
