import { createClassifier, type HitContext } from './classify';
import { createUserAgentParser } from './user-agent';

it('bench', async () => {
  const c = await createClassifier();
  const uas = [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  ];
  const refs = [null, 'https://www.google.com/', 'https://l.facebook.com/', 'https://chatgpt.com/', 'https://blog.partner.org/x', 'https://example.com/a'];
  const urls = ['https://example.com/', 'https://example.com/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=june', 'https://example.com/p?gclid=abc123', 'https://example.com/docs/intro'];
  const hits: HitContext[] = [];
  for (let i = 0; i < 4096; i++) {
    hits.push({
      url: urls[i % urls.length] ?? null,
      referrer: refs[i % refs.length] ?? null,
      userAgent: `${uas[i % uas.length]}${i % 200 === 0 ? '' : ''}`,
      ip: `${(i * 37) % 200 + 20}.${(i * 11) % 255}.${(i * 7) % 255}.${i % 250 + 1}`,
      siteDomain: 'example.com',
    });
  }
  const run = (n: number) => { const t = process.hrtime.bigint(); for (let i = 0; i < n; i++) c.classify(hits[i & 4095]!); return Number(process.hrtime.bigint() - t) / n / 1000; };
  run(20000);
  const perHit = [run(200000), run(200000), run(200000)];
  // without geo / isolate parts
  const ua = createUserAgentParser({ cacheSize: 1 });
  let t = process.hrtime.bigint();
  for (let i = 0; i < 2000; i++) ua.parse(`${uas[i % 4]} x${i}`);
  const coldUa = Number(process.hrtime.bigint() - t) / 2000 / 1000;
  console.log(`classify warm: ${perHit.map((x) => x.toFixed(2)).join(' / ')} µs per hit; cold UA parse ${coldUa.toFixed(1)} µs; rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
}, 120000);
