// Conventions every public answer shares, whichever service builds it.
export { metaHead, type MetaHead, type MetaWebsite } from './meta';
export { hasPii, maskEmail, maskName, maskPersonal, maskPhone, piiNote, PII_SCOPE, type PersonalFields } from './pii';
export { companyDomain, normaliseDomain } from './domains';
export { readSwitch } from './switches';
export { FIGURE_SIGNIFICANT_DIGITS, settleFigure, settleFigureOrNull } from './figures';
