// What the text around a number says about it: a phone label before it, or code, a log line or a quantity around it.

/** Words that announce a phone number, in the languages of the evaluation and a few more; they may be followed by a few words. */
const PHONE_WORDS = [
  'phone', 'telephone', 'tel', 'tele', 'mobile', 'cell', 'cellphone', 'fax', 'whatsapp', 'sms', 'call', 'ring', 'dial', 'contact', 'hotline', 'helpline',
  'telefon', 'handy', 'mobil', 'rufnummer', 'anrufen', 'ruf', 'festnetz', 'tlf', 'puh', 'puhelin',
  'téléphone', 'tél', 'portable', 'appelez', 'appeler', 'joindre',
  'teléfono', 'telefono', 'telefone', 'móvil', 'movil', 'celular', 'cellulare', 'llámame', 'llamar', 'llame', 'ligue', 'ligar', 'chiama', 'chiamare', 'contato', 'contacto', 'contatto',
  'telefoon', 'mobiel', 'bel', 'bellen', 'komórka', 'kom', 'gsm', 'telepon', 'telp', 'ponsel', 'hp', 'điện thoại', 'sđt', 'đt',
  'тел', 'телефон', 'моб', 'мобильный', 'мобільний', 'звоните', 'позвоните', 'телефону',
  'τηλ', 'τηλέφωνο', 'κινητό', 'טלפון', 'טל', 'נייד', 'هاتف', 'جوال', 'تلفون', 'اتصل', 'تلفن', 'موبایل', 'تماس',
  'फ़ोन', 'फोन', 'मोबाइल', 'โทร', '電話', '携帯', '連絡先', '电话', '手机', '手機', '联系', '전화', '휴대폰', '핸드폰', '연락처',
];

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// A label word (not the end of a longer word), then up to 24 characters without digits or line breaks ("Tel. (Büro): ").
const PHONE_LABEL = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${PHONE_WORDS.map(escapeRegExp).join('|')})(?![\\p{L}])[^\\d\\n]{0,24}$`, 'iu');

/** Digits right after one of these labels are an id, a quantity, a postal code or a tracking number, not a phone number. */
const ID_LABEL =
  /(?:\b(?:limit|max|min|size|count|total|amount|balance|timestamp|epoch|ts|offset|seed|pid|uid|port|bytes|order|invoice|inv|ref|reference|tracking|track|shipment|parcel|sku|isbn|issn|ticket|case|account|acct|serial|customer|booking|confirmation|transaction|id|ups|usps|fedex|dhl|bestellung|bestellnummer|rechnung|rechnungsnummer|auftrag|auftragsnummer|kundennummer|commande|facture|référence|pedido|factura|referencia|zip|postal|postcode|plz|cep)|سفارش|فاکتور|حساب|فاتورة|الطلب|заказ|сч[её]т|订单|编号|发票|發票|注文番号|伝票番号)(?:\s*(?:no\.?|nr\.?|number|num\.?|nummer|numéro|número|n[°º]|id|#))?\s*[:#.-]?\s*#?\s*$/i;

/** A unit or a counted noun after a number makes it a quantity ("3 973 193 d/m", "2147483647 ms"). */
const QUANTITY_AFTER =
  /^\s?(?:ms|s|sec|secs|seconds?|min|minutes?|h|hours?|days?|bytes?|[kmgtp]i?b|b|times|px|%|users?|downloads?|stars?|rows?|records?|items?|entries|lines?|tokens?|chars?|characters?|requests?|req|ops|iterations?|cycles?|ns|µs|us|hz|[kmg]hz|km|kg|d\/m|\/s|\/sec|per)(?![\p{L}\p{N}])/iu;

/** A version or section number: "version 1.2.3", "v 1.2.3", "§ 12.3". */
export const VERSION_CONTEXT = /(?:\bv|\bver\.?|version|versión|versao|versão|release|build|firmware|section|chapter|abschnitt|kapitel|§|バージョン)(?:\s*[:=]?\s*|-)$/i;

// Signs of code and logs: braces, statement ends, assignments and comparisons, calls, comments, tags, table pipes,
// JSON keys; a line that starts with a date and time, a log level.
const CODE_SIGNS =
  /[{}|=]|;[ \t]*$|[A-Za-z_$]\(|(?<!:)\/\/|\/\*|<\/?[A-Za-z]|":|^[ \t]*\[?(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\d\d:\d\d:\d\d)|\b(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\b/gm;
// A key in code or configuration right before the number: snake_case or camelCase, then a colon.
const CODE_KEY = /(?:^|[\s,{])["']?(?:[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*)["']?\s*:\s*["']?$/;

const WINDOW = 200;
/** How far around a number other numbers make it part of a table or a list. */
const NEARBY = 100;

/** What is known of the text before one start. */
interface StartContext {
  labelled?: boolean;
  idBefore?: boolean;
  inUrl?: boolean;
  /** In a code span or block, or after a key of code. */
  codeBefore?: boolean;
}

/**
 * The context of the numbers of one text. A chain of digit groups is tried from each of its groups at several
 * lengths, so what depends only on where a number starts is worked out once per start.
 */
export class NumberContext {
  private fences: number[] | undefined;
  /** Where CODE_SIGNS match, found in one pass over the text when a number first needs them. */
  private signs: number[] | undefined;
  private readonly byStart = new Map<number, StartContext>();

  /** `numbers`: where the text's numbers of two digits or more start, in order. */
  constructor(
    private readonly text: string,
    private readonly numbers: readonly number[] = [],
  ) {}

  private at(start: number): StartContext {
    let entry = this.byStart.get(start);
    if (!entry) this.byStart.set(start, (entry = {}));
    return entry;
  }

  /** A phone label on the same line, shortly before `start`. */
  labelled(start: number): boolean {
    const entry = this.at(start);
    return (entry.labelled ??= this.findLabel(start));
  }

  private findLabel(start: number): boolean {
    const before = this.before(start, 48);
    // The label and what follows it hold no digits: only the text after the last digit can end with a label.
    let from = before.length;
    while (from > 0 && !isDigit(before.charCodeAt(from - 1))) from--;
    return from < before.length && PHONE_LABEL.test(before.slice(from));
  }

  /** An id, tracking or version label before, or a unit after. */
  notAPhone(start: number, end: number): boolean {
    const entry = this.at(start);
    entry.idBefore ??= ((before) => ID_LABEL.test(before) || VERSION_CONTEXT.test(before))(this.text.slice(Math.max(0, start - 40), start));
    return entry.idBefore || QUANTITY_AFTER.test(this.text.slice(end, end + 12));
  }

  /** Inside a URL or a path: the token before the number has "://", starts with "www.", or is a path up to a slash. */
  inUrl(start: number): boolean {
    const entry = this.at(start);
    return (entry.inUrl ??= this.findUrl(start));
  }

  private findUrl(start: number): boolean {
    let k = start;
    const floor = Math.max(0, start - 300);
    while (k > floor && !endsToken(this.text.charCodeAt(k - 1))) k--;
    const token = this.text.slice(k, start);
    if (token.includes('://') || token.startsWith('www.')) return true;
    // A segment of a path: "/assets/13285808/20844584".
    return token.endsWith('/') && (token.startsWith('/') || token.indexOf('/') < token.length - 1);
  }

  /** Inside code, a code span, a log line or a table (a sign of one on its line, nearby): numbers there are values, not phone numbers. */
  inCode(start: number, end: number): boolean {
    const before = this.before(start, WINDOW);
    const entry = this.at(start);
    entry.codeBefore ??= countOf(before, '`') % 2 === 1 || this.inFence(start) || CODE_KEY.test(before.slice(-64));
    if (entry.codeBefore) return true;
    const after = this.text.slice(end, Math.min(this.text.length, end + WINDOW));
    const lineEnd = after.indexOf('\n');
    return this.signIn(start - before.length, lineEnd === -1 ? end + after.length : end + lineEnd);
  }

  /**
   * Three or more other numbers on the line nearby: a table, a list of values or command output ("1234567 89012" in a
   * line of `ps`), where a phone number would come with a label.
   */
  amongNumbers(start: number, end: number): boolean {
    const before = this.before(start, NEARBY);
    const after = this.text.slice(end, Math.min(this.text.length, end + NEARBY));
    const lineEnd = after.indexOf('\n');
    const others = countIn(this.numbers, start - before.length, start) + countIn(this.numbers, end, lineEnd === -1 ? end + after.length : end + lineEnd);
    return others >= 3;
  }

  /** A sign of code or logs in [from, to). */
  private signIn(from: number, to: number): boolean {
    if (this.signs === undefined) {
      this.signs = [];
      CODE_SIGNS.lastIndex = 0;
      for (let m = CODE_SIGNS.exec(this.text); m !== null; m = CODE_SIGNS.exec(this.text)) this.signs.push(m.index);
    }
    return countIn(this.signs, from, to) > 0;
  }

  /** The text of the line before `start`, at most `max` characters. */
  private before(start: number, max: number): string {
    const window = this.text.slice(Math.max(0, start - max), start);
    return window.slice(window.lastIndexOf('\n') + 1);
  }

  /** Inside a fenced code block: an odd number of ``` before. The fences are found once per text. */
  private inFence(start: number): boolean {
    if (this.fences === undefined) {
      this.fences = [];
      for (let at = this.text.indexOf('```'); at !== -1; at = this.text.indexOf('```', at + 3)) this.fences.push(at);
    }
    let n = 0;
    for (const at of this.fences) {
      if (at >= start) break;
      n++;
    }
    return n % 2 === 1;
  }
}

/** How many of the sorted `positions` lie in [from, to). */
function countIn(positions: readonly number[], from: number, to: number): number {
  return lowerBound(positions, to) - lowerBound(positions, from);
}

function lowerBound(positions: readonly number[], value: number): number {
  let lo = 0;
  let hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (positions[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** White space, quotes, brackets and angle brackets end the token a URL or path is read from. */
function endsToken(c: number): boolean {
  return c <= 32 || c === 34 || c === 39 || c === 96 || c === 40 || c === 41 || c === 60 || c === 62 || c === 91 || c === 93 || c === 0xa0;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function countOf(s: string, ch: string): number {
  let n = 0;
  for (let at = s.indexOf(ch); at !== -1; at = s.indexOf(ch, at + 1)) n++;
  return n;
}
