import { maskEmail, maskName, maskPersonal, maskPhone } from './pii';

describe('masking personal data', () => {
  it('keeps the email domain and the first letter only', () => {
    expect(maskEmail('ada@example.com')).toBe('a***@example.com');
    expect(maskEmail('Grace.Hopper@navy.mil')).toBe('G***@navy.mil');
    expect(maskEmail('not-an-email')).toBe('***');
  });

  it('keeps the country prefix and last two digits of a phone', () => {
    expect(maskPhone('+441234567858')).toBe('+44********58');
    expect(maskPhone('+44 (0) 20-7946 0958')).toBe('+44*********58');
    expect(maskPhone('12345')).toBe('***');
  });

  it('reduces a name to initials', () => {
    expect(maskName('Ada Lovelace')).toBe('A. L.');
    expect(maskName('  émile   zola ')).toBe('É. Z.');
    expect(maskName(' ')).toBe('***');
  });

  it('masks the three fields of a row and leaves nulls and the rest alone', () => {
    expect(maskPersonal({ id: 'x', email: 'bob@shop.test', phone: null, name: 'Bob' })).toEqual({ id: 'x', email: 'b***@shop.test', phone: null, name: 'B.' });
  });
});
