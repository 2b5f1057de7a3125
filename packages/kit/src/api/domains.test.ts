import { companyDomain, normaliseDomain } from './domains';

describe('domains', () => {
  it('normalises what people paste into the domain as written', () => {
    expect(normaliseDomain(' HTTPS://Shop.Example.com/cart?x=1#top ')).toBe('shop.example.com');
    expect(normaliseDomain('example.com.')).toBe('example.com');
    expect(normaliseDomain('www.example.com/')).toBe('www.example.com');
    expect(normaliseDomain('example.com:8080')).toBe('example.com:8080');
  });

  it('drops a leading www. for company domains only', () => {
    expect(companyDomain(' HTTP://www.Acme.test?x=1 ')).toBe('acme.test');
    expect(companyDomain('wwwacme.test')).toBe('wwwacme.test');
    expect(companyDomain('shop.www.acme.test')).toBe('shop.www.acme.test');
  });
});
