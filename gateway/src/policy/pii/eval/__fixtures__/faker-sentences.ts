import {
  type Faker,
  fakerAF_ZA, fakerCS_CZ, fakerDA, fakerDE, fakerDE_CH, fakerEL, fakerEN_AU, fakerEN_GB, fakerEN_IN, fakerEN_NG, fakerEN_US,
  fakerES, fakerFA, fakerFI, fakerFR, fakerFR_CH, fakerHE, fakerHU, fakerID_ID, fakerIT, fakerJA, fakerKO, fakerNB_NO,
  fakerNL, fakerPL, fakerPT_BR, fakerPT_PT, fakerRO, fakerRU, fakerSV, fakerTH, fakerTR, fakerUK, fakerVI, fakerZH_CN,
  fakerZH_TW,
} from '@faker-js/faker';
import type { CountryCode } from 'libphonenumber-js/max';
import type { PiiType } from '../../../../contract/policies.js';

/** The faker locales of the evaluation, each with the region its phone numbers are validated in. */
export const LOCALES: ReadonlyArray<{ id: string; faker: Faker; region: CountryCode }> = [
  { id: 'en_US', faker: fakerEN_US, region: 'US' },
  { id: 'en_GB', faker: fakerEN_GB, region: 'GB' },
  { id: 'en_AU', faker: fakerEN_AU, region: 'AU' },
  { id: 'en_IN', faker: fakerEN_IN, region: 'IN' },
  { id: 'en_NG', faker: fakerEN_NG, region: 'NG' },
  { id: 'af_ZA', faker: fakerAF_ZA, region: 'ZA' },
  { id: 'de', faker: fakerDE, region: 'DE' },
  { id: 'de_CH', faker: fakerDE_CH, region: 'CH' },
  { id: 'fr', faker: fakerFR, region: 'FR' },
  { id: 'fr_CH', faker: fakerFR_CH, region: 'CH' },
  { id: 'es', faker: fakerES, region: 'ES' },
  { id: 'it', faker: fakerIT, region: 'IT' },
  { id: 'pt_BR', faker: fakerPT_BR, region: 'BR' },
  { id: 'pt_PT', faker: fakerPT_PT, region: 'PT' },
  { id: 'nl', faker: fakerNL, region: 'NL' },
  { id: 'da', faker: fakerDA, region: 'DK' },
  { id: 'sv', faker: fakerSV, region: 'SE' },
  { id: 'nb_NO', faker: fakerNB_NO, region: 'NO' },
  { id: 'fi', faker: fakerFI, region: 'FI' },
  { id: 'pl', faker: fakerPL, region: 'PL' },
  { id: 'cs_CZ', faker: fakerCS_CZ, region: 'CZ' },
  { id: 'hu', faker: fakerHU, region: 'HU' },
  { id: 'ro', faker: fakerRO, region: 'RO' },
  { id: 'el', faker: fakerEL, region: 'GR' },
  { id: 'tr', faker: fakerTR, region: 'TR' },
  { id: 'ru', faker: fakerRU, region: 'RU' },
  { id: 'uk', faker: fakerUK, region: 'UA' },
  { id: 'he', faker: fakerHE, region: 'IL' },
  { id: 'fa', faker: fakerFA, region: 'IR' },
  { id: 'ja', faker: fakerJA, region: 'JP' },
  { id: 'ko', faker: fakerKO, region: 'KR' },
  { id: 'zh_CN', faker: fakerZH_CN, region: 'CN' },
  { id: 'zh_TW', faker: fakerZH_TW, region: 'TW' },
  { id: 'th', faker: fakerTH, region: 'TH' },
  { id: 'vi', faker: fakerVI, region: 'VN' },
  { id: 'id_ID', faker: fakerID_ID, region: 'ID' },
];

/** One generated value set in a sentence: `text.slice(start, end)` is the value. */
export interface Sample {
  locale: string;
  region: CountryCode;
  type: PiiType;
  value: string;
  text: string;
  start: number;
  end: number;
}

type Generate = (f: Faker) => string;

/** Credentials in their issuers' published formats, the random part from faker. */
const SECRETS: readonly Generate[] = [
  (f) => f.internet.jwt(),
  (f) => `ghp_${f.string.alphanumeric(36)}`,
  (f) => `github_pat_${f.string.alphanumeric(22)}_${f.string.alphanumeric(59)}`,
  (f) => `AKIA${f.string.alphanumeric({ length: 16, casing: 'upper' })}`,
  (f) => `xoxb-${f.string.numeric(12)}-${f.string.numeric(13)}-${f.string.alphanumeric(24)}`,
  (f) => `sk-proj-${f.string.alphanumeric(48)}`,
  (f) => `sk-ant-api03-${f.string.alphanumeric(86)}`,
  (f) => `AIza${f.string.alphanumeric(35)}`,
];

const STYLES = ['human', 'national', 'international'] as const;

const GENERATORS: Readonly<Record<Exclude<PiiType, 'ssn'>, Generate>> = {
  email: (f) => f.internet.email(),
  phone: (f) => f.phone.number({ style: f.helpers.arrayElement(STYLES) }),
  credit_card: (f) => f.finance.creditCardNumber(),
  iban: (f) => f.finance.iban({ formatted: f.datatype.boolean() }),
  ip_address: (f) => (f.datatype.boolean() ? f.internet.ipv4() : f.internet.ipv6()),
  secret: (f) => f.helpers.arrayElement(SECRETS)(f),
};

/**
 * Frames that put a value in a sentence of the locale, without a word that names the value's kind: faker's words,
 * names, streets, cities and companies around it.
 */
const FRAMES: ReadonlyArray<(f: Faker, value: string) => [string, string]> = [
  (f) => [`${f.lorem.words({ min: 2, max: 6 })} `, ` ${f.lorem.words({ min: 2, max: 6 })}.`],
  (f) => [`${f.person.fullName()}, `, `, ${f.location.streetAddress()}, ${f.location.city()}`],
  (f) => [`${f.lorem.sentence()} `, ` ${f.lorem.sentence()}`],
  (f) => [`${f.person.fullName()} (`, `)`],
  (f) => [`- ${f.company.name()}: `, ''],
];

/** `perType` samples of each type in each locale (twice as many phone numbers), the same on every run. */
export function fakerSamples(perType = 200, seed = 22): Sample[] {
  const samples: Sample[] = [];
  for (const { id, faker, region } of LOCALES) {
    faker.seed(seed);
    for (const [type, generate] of Object.entries(GENERATORS) as Array<[PiiType, Generate]>) {
      const count = type === 'phone' ? perType * 2 : perType;
      for (let i = 0; i < count; i++) {
        const value = generate(faker);
        const [before, after] = faker.helpers.arrayElement(FRAMES)(faker, value);
        samples.push({ locale: id, region, type, value, text: before + value + after, start: before.length, end: before.length + value.length });
      }
    }
  }
  return samples;
}
