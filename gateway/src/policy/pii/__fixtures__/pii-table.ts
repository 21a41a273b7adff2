import type { PiiType } from '../../../contract/policies.js';

export interface PiiRow {
  text: string;
  types: PiiType[];
}

// Credentials are assembled at run time so that secret scanners do not flag this file; none of them is real.
const join = (...parts: string[]): string => parts.join('');
const GITHUB_PAT = join('ghp', '_', 'R7vK2mXq9LpT4wZs8NcY3bHd6FjQ1aUe5GiO');
const GITHUB_FINE = join('github', '_pat_', '11ABCDEFG0', 'a1B2c3D4e5F6g7H8i9J0k1_L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g3H4i5J6k7');
const SLACK = join('xox', 'b-', '2048137590', '-', '4096253871', '-', 'Qm7RtY2vXp9KdL4sWn8HcB3j');
const STRIPE = join('sk', '_live_', '51HxQ2LmN8pR4tV6wY9zB3cD5fG7hJ1kL0');
const OPENAI = join('sk', '-proj-', 'Xa7Kp2Lq9Rm4Tn8Vw3Yz6Bc1Df5Gh0Jk2Lm7Np4Qr9St3Uv8Wx');
const ANTHROPIC = join('sk', '-ant-', 'api03-', 'Qx8Lm2Rp7Tv4Wz9Yb3Nc6Dk1Fh5Gj0Ks2Mq8Pt4Vw7Xz');
const GOOGLE = join('AI', 'za', 'SyD4x8Kq2Lm7Np3Rt9Vw6Yb1Cf5Hj0Kn2Qs');
const AWS_ID = join('AK', 'IA', 'IOSFODNN7', 'EXAMPLE');
const AWS_SECRET = join('wJalrXUtnFEMI', '/K7MDENG/', 'bPxRfiCYEXAMPLEKEY');
const JWT = join(
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
  '.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ',
  '.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
);
const PEM = join(
  '-----BEGIN RSA ', 'PRIVATE KEY-----\n',
  'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n',
  '+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40R\n',
  '-----END RSA ', 'PRIVATE KEY-----',
);

/** True positives in several formats and languages, and look-alikes that must pass. */
export const PII_TABLE: readonly PiiRow[] = [
  // Email
  { text: 'Please reply to john.doe@example.com by Friday.', types: ['email'] },
  { text: 'Bitte schreiben Sie an anna.mueller@beispiel.de, danke.', types: ['email'] },
  { text: "Contactez jean.dupont+news@exemple.fr pour plus d'informations.", types: ['email'] },
  { text: 'Mi correo es maria_garcia-lopez@correo.es y estoy disponible.', types: ['email'] },
  { text: '山田さんのメールはtaro.yamada@example.co.jpです。', types: ['email'] },
  { text: '<a href="mailto:SUPPORT@Acme-Corp.IO">support</a>', types: ['email'] },
  // Phone: US
  { text: 'Call me at (415) 555-2671 tomorrow.', types: ['phone'] },
  { text: 'My cell is 415-555-2671.', types: ['phone'] },
  { text: 'International: +1 415 555 2671', types: ['phone'] },
  { text: 'Toll-free 1-800-555-0199 (24/7)', types: ['phone'] },
  { text: 'phone=2025550123', types: ['phone'] },
  // Phone: UK
  { text: 'Our London office: +44 20 7946 0958', types: ['phone'] },
  { text: 'Ring us on 020 7946 0958 during office hours.', types: ['phone'] },
  { text: 'Mobile 07911 123456, evenings only', types: ['phone'] },
  // Phone: DE
  { text: 'Rufen Sie mich unter +49 30 12345678 an.', types: ['phone'] },
  { text: 'Tel.: 030 12345678, Handy: 0151 23456789', types: ['phone'] },
  { text: 'Zentrale +49 (0)30 12345678', types: ['phone'] },
  // Phone: FR
  { text: 'Appelez-moi au 06 12 34 56 78 ce soir.', types: ['phone'] },
  { text: 'Standard : +33 1 23 45 67 89', types: ['phone'] },
  // Phone: IN
  { text: 'WhatsApp me on +91 98765 43210', types: ['phone'] },
  { text: 'Mera number 98451 23456 hai', types: ['phone'] },
  // Phone: JP
  { text: '電話番号は03-1234-5678です。', types: ['phone'] },
  { text: '携帯：090-1234-5678までご連絡ください', types: ['phone'] },
  { text: 'Tokyo office +81 3-1234-5678', types: ['phone'] },
  { text: 'Llámame al +34 612 34 56 78, por favor.', types: ['phone'] },
  // Phone: national formats of other regions, with or without a label
  { text: 'Llámame al 985 39 71 56 por la tarde.', types: ['phone'] },
  { text: 'Mi número es 914954672.', types: ['phone'] },
  { text: 'Juan Pérez, 612 34 56 78, Calle Mayor 5, Madrid', types: ['phone'] },
  { text: 'شماره تماس من ۰۹۱۲۳۴۵۶۷۸۹ است', types: ['phone'] },
  { text: 'تلفن: 021-88776655', types: ['phone'] },
  { text: 'Ligue para (11) 91234-5678 amanhã.', types: ['phone'] },
  { text: 'Звоните: 8 (912) 345-67-89', types: ['phone'] },
  { text: 'Bel me op 06 12345678 vanavond.', types: ['phone'] },
  { text: '연락처 010-1234-5678', types: ['phone'] },
  { text: 'Tel. 0761 1234567 (Büro)', types: ['phone'] },
  // Look-alikes of phones in code, logs and documentation
  { text: 'const INT_MAX = 2147483647; // 0x7fffffff', types: [] },
  { text: 'The number must be between 0 and 2147483647.', types: [] },
  { text: 'octal octets (`0300.0250.01.01`) and single-value (`3232235777`) notation', types: [] },
  { text: '2024-01-15 10:30:45 INFO worker 985397156 started in 4096 ms', types: [] },
  { text: 'timeout_ms: 3600000\nretryDelay: 250000', types: [] },
  { text: 'Built at 1699999999 from 4f1c9a2 (Copyright 2011-2024, 1000-1200 walks per second)', types: [] },
  { text: '| encode | 1348700 | 5000 | 26974 |', types: [] },
  { text: 'See https://gist.github.com/anon/8346728 and /assets/13285808/20844584/image.png', types: [] },
  { text: 'JSON Schema draft-04/06/07/2019-09/2020-12 support', types: [] },
  { text: 'array access a[999999999] and 3 973 193 d/m', types: [] },
  { text: 'CEP 01310-100, São Paulo; PLZ 10115 Berlin', types: [] },
  { text: 'شماره سفارش 12345678 ثبت شد؛ заказ 87654321', types: [] },
  // Payment cards
  { text: 'Visa: 4111 1111 1111 1111 exp 12/27', types: ['credit_card'] },
  { text: 'card=4012888888881881', types: ['credit_card'] },
  { text: 'Mastercard 5555-5555-5555-4444', types: ['credit_card'] },
  { text: 'Meine Kreditkarte: 5105 1051 0510 5100', types: ['credit_card'] },
  { text: 'Amex 3782 822463 10005, CVV 1234', types: ['credit_card'] },
  { text: 'Tarjeta American Express 371449635398431', types: ['credit_card'] },
  { text: 'Carte bancaire : 2223-0031-2200-3222', types: ['credit_card'] },
  // SSN
  { text: 'My SSN is 123-45-6789.', types: ['ssn'] },
  { text: 'Social security number: 219 09 9999', types: ['ssn'] },
  { text: 'ssn=078-05-1120', types: ['ssn'] },
  // IBAN: every country of the IBAN registry, and countries that use IBANs outside it
  { text: 'شماره شبا: IR60 1181 8530 6706 0032 3001 34', types: ['iban'] },
  { text: 'Transfer to BR97 0036 0305 0000 1000 9795 493P 1 by Friday', types: ['iban'] },
  { text: 'Hesap: TR33 0006 1005 1978 6457 8413 26', types: ['iban'] },
  { text: 'IBAN: DE89 3704 0044 0532 0130 00, BIC COBADEFFXXX', types: ['iban'] },
  { text: 'Überweisung an DE89370400440532013000 bitte heute.', types: ['iban'] },
  { text: 'Pay to GB82 WEST 1234 5698 7654 32 today', types: ['iban'] },
  { text: 'account GB29NWBK60161331926819', types: ['iban'] },
  { text: 'Virement sur FR14 2004 1010 0505 0001 3M02 606 merci', types: ['iban'] },
  { text: 'Rekening NL91ABNA0417164300.', types: ['iban'] },
  { text: 'Rekeningnummer NL91 ABNA 0417 1643 00 graag', types: ['iban'] },
  // IP addresses: public unicast addresses, the ones a provider can trace to a subscriber
  { text: 'The server is at 81.2.69.142 behind NAT.', types: ['ip_address'] },
  { text: 'curl http://81.2.69.160:8080/health', types: ['ip_address'] },
  { text: 'Client IP 185.199.108.153 was blocked.', types: ['ip_address'] },
  { text: 'Host 2a00:1450:4001:0830:0000:0000:0000:200e unreachable', types: ['ip_address'] },
  { text: 'Route via 2a02:c7f:7e26::ff00:42:8329.', types: ['ip_address'] },
  { text: 'mapped ::ffff:81.2.69.142 address', types: ['ip_address'] },
  { text: 'inet 81.2.69.142/24 brd 81.2.69.255 scope global eth0', types: ['ip_address'] },
  // Secrets
  { text: `Here is my key:\n${PEM}\nplease keep it safe`, types: ['secret'] },
  { text: `aws_access_key_id = ${AWS_ID}`, types: ['secret'] },
  { text: `My AWS secret is ${AWS_SECRET}`, types: ['secret'] },
  { text: `git clone https://${GITHUB_PAT}@github.com/acme/app.git`, types: ['secret'] },
  { text: `token ${GITHUB_FINE}`, types: ['secret'] },
  { text: `SLACK_BOT_TOKEN=${SLACK}`, types: ['secret'] },
  { text: `stripe.api_key = "${STRIPE}"`, types: ['secret'] },
  { text: `OPENAI_API_KEY=${OPENAI}`, types: ['secret'] },
  { text: `Mein Schlüssel lautet ${ANTHROPIC}.`, types: ['secret'] },
  { text: `const maps = new Client({ key: '${GOOGLE}' })`, types: ['secret'] },
  { text: `Authorization: Bearer ${JWT}`, types: ['secret'] },
  { text: 'password=Tr0ub4dor&3', types: ['secret'] },
  { text: '{"api_key": "9f8Kq2LmX7pR4tV6wY1zB3cD"}', types: ['secret'] },
  { text: 'DATABASE_URL=postgres://app:S3cr3tPassw0rd@db.internal:5432/app', types: ['secret'] },
  { text: 'Passwort: Sommer2024!Berlin', types: ['secret'] },
  // Several kinds in one text
  { text: 'Contact: john.doe@example.com, (415) 555-2671, card 4111 1111 1111 1111', types: ['email', 'phone', 'credit_card'] },
  { text: 'Kunde anna@beispiel.de, IBAN DE89370400440532013000, IP 81.2.69.142', types: ['email', 'iban', 'ip_address'] },
  // Look-alikes: order and invoice numbers, ids
  { text: 'Your order #4155552671 has shipped.', types: [] },
  { text: 'Order number: 2025550123', types: [] },
  { text: 'Invoice INV-2024-00123 is due on 2024-02-01.', types: [] },
  { text: 'Rechnungsnummer 0301234567 vom 15.01.2024', types: [] },
  { text: 'Customer ID 12345678, ticket 987654', types: [] },
  // Look-alikes: dates and times
  { text: 'The meeting is on 2024-01-15 10:30 UTC.', types: [] },
  { text: 'Termin am 15.01.2024 um 14:30 Uhr', types: [] },
  { text: 'Due 01/15/2024, paid 12/25/2023', types: [] },
  { text: 'Timestamp 2024-01-15T10:30:45.123Z', types: [] },
  // Look-alikes: versions
  { text: 'Upgrade from v1.2.3 to 1.2.4 please', types: [] },
  { text: 'Running version 1.2.3.4 of the agent', types: [] },
  { text: 'Windows 10.0.19045.3803 with Chrome/120.0.6099.109', types: [] },
  { text: 'Kubernetes 1.29.3, OID 1.3.6.1.4.1.311', types: [] },
  // Look-alikes: UUIDs and hashes
  { text: 'request_id 550e8400-e29b-41d4-a716-446655440000', types: [] },
  { text: 'commit da39a3ee5e6b4b0d3255bfef95601890afd80709', types: [] },
  { text: 'sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', types: [] },
  { text: 'AWS secret rotation: commit DA39A3EE5E6B4B0D3255BFEF95601890AFD80709', types: [] },
  // Look-alikes: numbers that fail checks
  { text: 'Long id 4111111111111112 fails Luhn', types: [] },
  { text: 'Batch 1234567890123456 processed', types: [] },
  { text: 'IBAN-like DE89 3704 0044 0532 0130 01 with a wrong checksum', types: [] },
  { text: 'Not issued: 000-12-3456, 666-12-3456, 900-12-3456, 123-00-4567, 123-45-0000', types: [] },
  { text: 'ISBN 978-3-16-148410-0 and ISBN 0-306-40615-2', types: [] },
  { text: 'UPS 1Z999AA10123456784, USPS 9400 1000 0000 0000 0000 00, FedEx 7749 8765 4321', types: [] },
  { text: 'Total $1,234,567.89 or €1.234,56 incl. VAT', types: [] },
  { text: 'Placeholders such as 123-456-7890, 1234567890 and 000-000-0000 are not numbers', types: [] },
  { text: 'Invalid address 256.1.1.1 and 1.2.3.4.5', types: [] },
  { text: 'Coordinates 48.8566, 2.3522; temperature 98.6', types: [] },
  // Look-alikes: addresses that point at no one (loopback, unspecified, documentation, private, link-local,
  // network and broadcast addresses, netmasks, public resolvers) and versions
  { text: 'Listen on 0.0.0.0:8080 and 127.0.0.1, or [::1]:8080 and [::]:80', types: [] },
  { text: 'Examples use 192.0.2.10, 198.51.100.7, 203.0.113.42 and 2001:db8::ff00:42:8329', types: [] },
  { text: 'Private hosts 10.0.0.1, 172.16.4.2, 192.168.1.100, fd12:3456:789a::1 and fe80::1ff:fe23:4567:890a', types: [] },
  { text: 'Netmask 255.255.240.0, network 81.2.69.0/24 and 2a00:1450::/32, broadcast 81.2.69.255; DNS 1.1.1.1 and 8.8.8.8', types: [] },
  { text: 'Refs rfc2616#section-8.1.2.2; semver 1.2.3.4-rc.1; 42.2.0.192.in-addr.arpa', types: [] },
  // Look-alikes: no-reply senders are no one's mailbox
  { text: 'Co-Authored-By: Claude <noreply@anthropic.com>', types: [] },
  { text: 'From: Google <no-reply@accounts.google.com>, do-not-reply@example.org', types: [] },
  { text: 'Author: Octo Cat <583231+octocat@users.noreply.github.com>', types: ['email'] },
  // Look-alikes: near misses for email and IP
  { text: 'Send to user@localhost or install lodash@4.17.21 and foo@1.2.3', types: [] },
  { text: 'git remote add origin git@github.com:acme/app.git', types: [] },
  { text: 'Use @types/node and ping @alice on Slack', types: [] },
  { text: 'Meet at 12:30:45; MAC 00:1A:2B:3C:4D:5E; std::vector<int>', types: [] },
  // Look-alikes: near misses for secrets
  { text: "const obj = { username: 'john', password: 'secret123' }; redis.auth('my-top-secret')", types: [] },
  { text: 'new Redis("redis://username:authpassword@db.internal:6380/4")', types: [] },
  { text: '[![codecov](https://codecov.io/gh/acme/app/branch/main/graph/badge.svg?token=yZL6LtXkOA)]', types: [] },
  { text: 'It will prompt for a passphrase: "Enter passphrase for key"', types: [] },
  { text: 'password: ********', types: [] },
  { text: 'api_key: YOUR_API_KEY', types: [] },
  { text: 'export OPENAI_API_KEY=${OPENAI_API_KEY}', types: [] },
  { text: 'max_tokens: 4096, token_count: 1234', types: [] },
  { text: 'const password = config.database.password;', types: [] },
  { text: 'Use scikit-learn and sk-learn-style pipelines', types: [] },
  { text: '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----', types: [] },
  { text: 'The secret: always be kind to others.', types: [] },
  // Plain prose in several languages
  { text: 'Summarise the attached quarterly report in three bullet points.', types: [] },
  { text: 'Bitte übersetze diesen Absatz ins Französische.', types: [] },
  { text: 'プロジェクトの進捗を3行でまとめてください。', types: [] },
];
