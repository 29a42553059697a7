//! How a value may be spelled in an answer: every rule of spelling lives
//! here, once. Each function turns a value as a maintainer writes it in a
//! check source (`1095`, `26.5`, `07:10`, `2031-02-03`, `Penrose-Adair`)
//! into a JavaScript regular expression (for the `i` flag) that finds it in
//! any usual spelling, and [`candidates`] into the patterns that find any
//! value of the same kind: what an answer line may not hold besides the
//! right one.
//!
//! - numbers: thousands separated by a comma, a space, a no-break or thin
//!   space (`1,095`, `1 095`), a decimal point or comma (`26.5`, `26,50`),
//!   no leading zero (`.4098`), trailing zeros (`9.00`), a vulgar fraction
//!   (`26½`, `3¼`), words (`nine`, `one thousand and ninety-five`,
//!   `twenty-six and a half`);
//! - units: a unit names its family, and every spelling of the family
//!   counts, singular or plural: `min` is also `mins`, `minute` and `35m`;
//!   `km` is also `kilometre` and `kilometer`; `kg` is also `kilo`,
//!   `kilogram` and `kilogramme`; `g` is also `gram`; `%` is also
//!   `per cent` ([`UNIT_FAMILIES`]);
//! - times: `07:10`, `7.10`, `7h10`, `0710`, `7:10 am`, `7.10am`, `19:30` as
//!   `7:30 pm` or `7.30 in the evening`, `noon`, `ten past seven`, `half
//!   past seven`;
//! - dates: ISO `2031-02-03`, `3 February 2031`, `3rd of Feb`, `February
//!   3rd, 2031`, `03-Feb-2031`, `03/02/2031` and `03.02.2031` (day first); a
//!   year, when written, must be the right one;
//! - text: any case, any Unicode hyphen or dash for `-` (U+2010..U+2015,
//!   U+2212), typographic apostrophes and quotes, a letter with or without
//!   its accent (`Sève`, `Seve`), any run of white space, an optional full
//!   stop after an abbreviation (`Fl.`), an optional space between a letter
//!   and a digit (`FV1`, `FV 1`, `15s`, `15 s`); a text of digits (a phone
//!   number, `01632 960418`) in any grouping or bracketing of its digits
//!   (`(01632) 960418`, `01632 960 418`);
//! - names ([`name`]): `Odile Brannigan-Sève` also as `O. Brannigan-Sève`,
//!   `Brannigan-Sève, Odile` and `Brannigan-Sève`, except a short form
//!   another candidate on the line shares;
//! - words ([`word`]): a keyword in any inflection (`fog`, `foggy`, `fogs`;
//!   `accession register`, `accessions register`).
//!
//! Markdown emphasis and list or table layout belong to answer lines
//! (`compile`), not to values.

use std::fmt::Write;

/// Every dash or hyphen a writer or a model may type for `-`.
pub const DASHES: &str = r"\-\u2010-\u2015\u2212";

/// A literal for a JavaScript pattern.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if r"\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The kinds of value a check names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Number,
    Time,
    Date,
    Text,
}

impl Kind {
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Number => "number",
            Kind::Time => "time",
            Kind::Date => "date",
            Kind::Text => "text",
        }
    }
}

/// Words a writer puts between two values it offers, or between a value and
/// its condition ("16 M, or 18 if the newsletter is right"): a number next
/// to one of them is offered as a value of its own.
const CONNECTIVES: &str = "or|and|if|to|but|than|for|fewer|more|less|maybe|perhaps";
/// The connectives that offer the number after them ("or 18"); "for 1
/// handcart" names what the value is for.
const CONNECTIVES_BEFORE: &str = "or|and|if|to|but|than|maybe|perhaps";

/// Words that offer a value with a doubt ("9 tallies, maybe 12", "Morwen
/// Cale, or the rostered captain"): on an answer line that holds a value
/// they make it a hedge. `or` is left out: it is one only when it offers
/// something else than the line's own value ("9, or nine").
pub const HEDGES: &[&str] = &[
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "might",
    "could",
    "may",
    "either",
    "unsure",
    "not sure",
    "uncertain",
    "unclear",
    "if",
    "unless",
    "otherwise",
];

/// The pattern of a word of [`HEDGES`]; "may" beside a day's number is the
/// month ("26 May", "May 26"), not a hedge, and so is "may" in a list or
/// span of months ("April, May and June", "May to July").
pub fn hedge_words() -> String {
    // Another month's name (not May itself), and what joins two in a list.
    // (Whole names or their abbreviations: "decrease" and "marked" are no
    // months.)
    let month = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?";
    let join = format!(r"(?:\s*[,;/&{DASHES}]\s*|\s+)(?:(?:and|or|to|through|till|until)\s+)?");
    let words: Vec<String> = HEDGES
        .iter()
        .map(|w| match *w {
            // The month: beside a day or a year, after a word that places
            // a month ("since May", "late May"), or beside another month.
            "may" => format!(
                r"(?<!\d\s?|\b(?:since|in|from|until|till|by|of|late|early|mid|last|next|this|end)\s|\b{month}{join})may(?!\s*\d|{join}{month})"
            ),
            w => w.replace(' ', r"\s+"),
        })
        .collect();
    format!(r"(?<![\w])(?:{})(?![\w])", words.join("|"))
}

/// The pattern of an `or` that offers something else than one of `own`
/// (the patterns of a line's own values; none: every `or`).
pub fn hedge_or(own: &[String]) -> String {
    let restated = if own.is_empty() { String::new() } else { format!(r"(?![^\w\n]{{0,4}}(?:{}))", own.join("|")) };
    format!(r"(?<![\w])or(?![\w]){restated}")
}

// ---------------------------------------------------------------- numbers

/// A number as written in a source: digits, an optional decimal part; `,`,
/// `_` and spaces between digit groups are read as separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Number {
    pub whole: String,
    /// Without trailing zeros.
    pub fraction: String,
}

impl Number {
    pub fn parse(value: &str) -> Result<Number, String> {
        let cleaned: String = value.trim().chars().filter(|c| !matches!(c, ',' | '_' | ' ')).collect();
        let (whole, fraction) = cleaned.split_once('.').unwrap_or((&cleaned, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || !(fraction.is_empty() || digits(fraction)) || whole.len() > 12 {
            return Err(format!("`{value}` is not a number (write digits, like 1095 or 26.5)"));
        }
        let whole = whole.trim_start_matches('0');
        let whole = if whole.is_empty() { "0" } else { whole };
        Ok(Number { whole: whole.to_string(), fraction: fraction.trim_end_matches('0').to_string() })
    }

    pub fn integer(&self) -> Option<u64> {
        self.fraction.is_empty().then(|| self.whole.parse().ok()).flatten()
    }

    /// As a person writes it: `1095`, `12,095`, `26.5` (a year stays `2031`).
    pub fn display(&self) -> String {
        let digits = self.whole.as_bytes();
        let mut grouped = String::new();
        for (i, d) in digits.iter().enumerate() {
            if digits.len() > 4 && i > 0 && (digits.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(*d as char);
        }
        if self.fraction.is_empty() { grouped } else { format!("{grouped}.{}", self.fraction) }
    }

    /// Is this a year (1900 to 2099), which a number line does not count as
    /// a second value unless a year is what it asks for?
    fn is_year(&self) -> bool {
        self.integer().is_some_and(|n| (1900..=2099).contains(&n))
    }
}

/// Thousands separators between digit groups.
const GROUP: &str = r"[,\u00a0\u202f\u2009 ]";
/// No digit (or decimal part) goes on after a number.
const NUMBER_END: &str = r"(?![\d]|[.,]\d)";
/// A number starts at no letter, digit or decimal point, or right after an
/// extension's `x` (`x4417`).
const NUMBER_START: &str = r"(?:(?<![\w.,])|(?<=(?<![\w.,])x)(?=\d))";

const UNITS: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];

/// A hyphen between tens and units, as typed: `twenty-four`, `twenty four`.
fn word_hyphen() -> String {
    format!("[{DASHES} ]")
}

/// Words for 0..=999, British (`one hundred and five`), as a pattern.
fn words_below_thousand(n: u64) -> String {
    let (hundreds, rest) = (n / 100, n % 100);
    let tens_units = if rest < 20 {
        UNITS[rest as usize].to_string()
    } else if rest % 10 == 0 {
        TENS[(rest / 10) as usize].to_string()
    } else {
        format!("{}{}{}", TENS[(rest / 10) as usize], word_hyphen(), UNITS[(rest % 10) as usize])
    };
    let hundred = if hundreds == 1 { "(?:one|a)" } else { UNITS[hundreds as usize % 20] };
    match (hundreds, rest) {
        (0, _) => tens_units,
        (_, 0) => format!("{hundred} hundred"),
        _ => format!("{hundred} hundred,?(?: and)? {tens_units}"),
    }
}

/// Words for an integer below a million, or `None`.
fn words(n: u64) -> Option<String> {
    match n {
        0..=999 => Some(words_below_thousand(n)),
        1_000..=999_999 => {
            let (thousands, rest) = (n / 1000, n % 1000);
            let head = if thousands == 1 {
                "(?:one|a) thousand".to_string()
            } else {
                format!("{} thousand", words_below_thousand(thousands))
            };
            Some(match rest {
                0 => head,
                1..=99 => format!("{head},?(?: and)? {}", words_below_thousand(rest)),
                _ => format!("{head},? {}", words_below_thousand(rest)),
            })
        }
        _ => None,
    }
}

/// The digits of a whole number, with optional separators between groups of three.
fn grouped_digits(whole: &str) -> String {
    if whole.len() <= 3 {
        return whole.to_string();
    }
    let head = whole.len() % 3;
    let mut out = String::new();
    if head > 0 {
        out.push_str(&whole[..head]);
    }
    for (i, chunk) in whole.as_bytes()[head..].chunks(3).enumerate() {
        if head > 0 || i > 0 {
            let _ = write!(out, "{GROUP}?");
        }
        out.push_str(std::str::from_utf8(chunk).expect("ASCII digits"));
    }
    out
}

/// After a whole number: no fraction that makes it another number (`26½`,
/// `26 1/2`, `26 and a half`).
const NO_FRACTION: &str = r"(?!\s?[\u00bc-\u00be]|\s+\d/\d|\s+and\s+(?:a\s+half|a\s+quarter|three\s+quarters)\b)";

/// The vulgar fraction for a decimal part, with its words and as typed: `.5`
/// is `½`, "a half", `1/2`.
fn vulgar(fraction: &str) -> Option<(&'static str, &'static str, &'static str)> {
    match fraction {
        "5" => Some((r"\u00bd", "a half", "1/2")),
        "25" => Some((r"\u00bc", "a quarter", "1/4")),
        "75" => Some((r"\u00be", "three quarters", "3/4")),
        _ => None,
    }
}

/// A number in any usual spelling (see the module documentation).
pub fn number(n: &Number) -> String {
    match number_words(n) {
        Some(w) => format!("(?:{}|{w})", number_digits(n)),
        None => number_digits(n),
    }
}

/// A number in digits: separators, a decimal point or comma, a vulgar
/// fraction.
pub fn number_digits(n: &Number) -> String {
    let whole = grouped_digits(&n.whole);
    let mut forms = Vec::new();
    if n.fraction.is_empty() {
        forms.push(format!(r"{whole}(?:\.0+)?{NUMBER_END}{NO_FRACTION}"));
    } else {
        // A decimal comma (`26,5`, `38,50`, `0,4098`), except where three
        // digits after it would read as thousands (`26,500`; `0,409` is no
        // thousands).
        let comma = if n.whole == "0" {
            format!("|{whole},{}0*", n.fraction)
        } else if n.fraction.len() < 3 {
            format!("|{whole},{}{}", n.fraction, if n.fraction.len() == 1 { "0?" } else { "" })
        } else if n.fraction.len() > 3 {
            format!("|{whole},{}", n.fraction)
        } else {
            String::new()
        };
        // Below one, the leading zero may go: `.4098`.
        let point_whole = if n.whole == "0" { "0?" } else { whole.as_str() };
        forms.push(format!(r"(?:{point_whole}\.{}0*{comma}){NUMBER_END}", n.fraction));
        // A number of hours with minutes: `26 hours 30 minutes`, `4 h 15 min`.
        if n.fraction.len() <= 2 && n.whole.len() <= 3 {
            let hundredths: u32 = format!("{:0<2}", n.fraction).parse().unwrap_or(0);
            if (hundredths * 60).is_multiple_of(100) {
                let minutes = hundredths * 60 / 100;
                forms.push(format!(
                    r"{whole}\s*(?:h|hours?|hrs?)\b\.?,?\s*(?:and\s+)?{minutes}\s*(?:m|mins?|minutes?)\b"
                ));
            }
        }
        if let Some((sign, part, typed)) = vulgar(&n.fraction) {
            // `26½`, `26 ½`, `26 1/2`; below one, `½` or `1/2` alone.
            let before = if n.whole == "0" { String::new() } else { format!(r"{whole}\s?") };
            let typed = if n.whole == "0" { typed.to_string() } else { format!(r"{whole}\s+{typed}") };
            forms.push(format!(r"{before}{sign}|{typed}(?!\d)"));
            // The fraction in words after the digits: `26 and a half`.
            if n.whole != "0" {
                forms.push(format!(r"{whole}\s+and\s+{part}\b"));
            }
        }
    }
    format!("{NUMBER_START}(?:{})", forms.join("|"))
}

/// A number in words (`one thousand and ninety-five`, `twenty-six and a
/// half`), where it has words.
pub fn number_words(n: &Number) -> Option<String> {
    let whole = n.whole.parse().ok().and_then(words)?;
    match vulgar(&n.fraction) {
        _ if n.fraction.is_empty() => Some(format!(r"\b{whole}\b{NO_FRACTION}")),
        Some((_, part, _)) => Some(format!(r"\b{whole} and {part}\b")),
        None => None,
    }
}

/// A number of its own, not a part of a date (`12` in `2031-10-12` or
/// `12 October`) or of a time (`10` in `07:10`): for a number stated
/// anywhere in an answer, where dates and times are all around it.
pub fn number_alone(n: &Number) -> String {
    let month = any_month();
    format!(
        r"(?<!{month}[\s{DASHES}]{{1,3}}|\d{{4}}-(?:\d\d-)?|\d[:h])(?!\d\d?{ORDINAL}(?: of)?[\s{DASHES}]+{month}|\d\d?[:h]\d\d){}",
        number(n)
    )
}

/// A number stated anywhere, or inside a range written between two other
/// numbers of the same list (`122 to 127 except 124` states 123, 125 and
/// 126 when 122 and 127 are in the list), unless the range excepts it.
pub fn number_stated(n: &Number, list: &[Number]) -> String {
    let alone = number_alone(n);
    let Some(value) = n.integer() else { return alone };
    let ints: Vec<u64> = list.iter().filter_map(Number::integer).collect();
    let below: Vec<String> = ints.iter().filter(|m| **m < value).map(u64::to_string).collect();
    let above: Vec<String> = ints.iter().filter(|m| **m > value).map(u64::to_string).collect();
    if below.is_empty() || above.is_empty() {
        return alone;
    }
    format!(
        r"(?:{alone}|(?<![\w.,])(?:{})\s*(?:to|through|[{DASHES}])\s*(?:{})(?!\d)(?![^\n.;]{{0,40}}\b(?:except|excluding|but not|bar|without)\b[^\n.;]{{0,30}}(?<!\d){value}(?!\d)))",
        below.join("|"),
        above.join("|")
    )
}

/// Units that name the same thing: a source names one, and every spelling
/// of its family counts (singular or plural). A unit of no family is taken
/// as written.
pub const UNIT_FAMILIES: &[&[&str]] = &[
    &["m", "metre", "meter"],
    &["min", "minute", "mn", "m"],
    &["h", "hr", "hour"],
    &["s", "sec", "second"],
    &["km", "kilometre", "kilometer"],
    &["kg", "kilo", "kilogram", "kilogramme"],
    &["l", "litre", "liter", "ltr"],
    &["M", "NM", "nmi", "nautical mile", "sea mile", "mile"],
    &["°C", "° C", "degree", "degree Celsius", "C", "Celsius"],
    &["tally"],
    &["g", "gram", "gramme"],
    &["ml", "millilitre", "milliliter"],
    &["cm", "centimetre", "centimeter"],
    &["mm", "millimetre", "millimeter"],
    &["%", "percent", "per cent"],
];

/// The spellings of one unit a source names: its family's, or itself.
fn unit_spellings(unit: &str) -> Vec<String> {
    let u = unit.trim();
    let singular = |s: &str| {
        let lower = s.to_lowercase();
        let stem = lower.strip_suffix("ies").map(|s| format!("{s}y"));
        stem.or_else(|| lower.strip_suffix('s').filter(|s| s.len() > 1).map(str::to_string)).unwrap_or(lower)
    };
    // A family is named by its first spelling or by any spelling as written
    // (case and all: `M` is the nautical mile, `m` the minute's first family).
    let family = UNIT_FAMILIES
        .iter()
        .find(|f| f.contains(&u))
        .or_else(|| UNIT_FAMILIES.iter().find(|f| f.iter().any(|s| s.len() > 2 && singular(s) == singular(u))));
    match family {
        Some(f) => f.iter().map(|s| s.to_string()).collect(),
        None => vec![u.to_string()],
    }
}

/// Units of measure a value may be converted into: every family's, and
/// the imperial and US units (`27.9 km / 17.3 mi`, `20 °C / 68 °F`).
const OTHER_UNITS: &[&str] = &[
    // (Not "in" nor "st": "52 in 2031", "1st".)
    "mi",
    "mile",
    "ft",
    "foot",
    "feet",
    "inch",
    "inches",
    "yd",
    "yard",
    "lb",
    "lbs",
    "pound",
    "oz",
    "ounce",
    "stone",
    "gal",
    "gallon",
    "pt",
    "pint",
    "qt",
    "quart",
    "fl oz",
    "°F",
    "F",
    "Fahrenheit",
    "mph",
    "kn",
    "knot",
    "km/h",
    "kph",
    "acre",
    "ha",
    "hectare",
];

/// After a number: any unit of [`UNIT_FAMILIES`] or [`OTHER_UNITS`], as
/// a unit (no letter after it).
pub fn any_unit() -> String {
    let mut all: Vec<&str> =
        UNIT_FAMILIES.iter().flat_map(|f| f.iter().copied()).chain(OTHER_UNITS.iter().copied()).collect();
    all.sort_by_key(|u| std::cmp::Reverse(u.len()));
    all.dedup();
    let list: Vec<String> = all.iter().map(|u| format!("{}s?", escape(u))).collect();
    format!(r"\s?(?:{})(?![a-z])", list.join("|"))
}

/// Units after a number (`min`, `kg`): every spelling of each, singular or
/// plural.
pub fn units(units: &[String]) -> String {
    let mut list: Vec<String> = Vec::new();
    for u in units {
        for s in unit_spellings(u) {
            let body = text_body_with(&s, Spaces::Plain);
            let plural = match s.strip_suffix('y') {
                Some(stem) if s.len() > 2 => format!("(?:{}ies|{body})", text_body_with(stem, Spaces::Plain)),
                _ if s.ends_with(char::is_alphabetic) => format!("{body}s?"),
                _ => body,
            };
            if !list.contains(&plural) {
                list.push(plural);
            }
        }
    }
    format!(r"[\s{DASHES}]{{0,3}}(?:{})(?![a-z])", list.join("|"))
}

/// A number with the units a line names: with one of them, or with no word
/// after it (`Crossing: 35` is 35 minutes); never with a word the units do
/// not name (`35 hours`).
pub fn with_units(number: &str, units: &str) -> String {
    format!(r"{number}(?:{units}|(?!\s*[{DASHES}]?\s*[a-z\u00c0-\u024f]))")
}

/// Any number: digits, a decimal without its leading zero, a vulgar
/// fraction, or a number word. "one" counts where it is offered as a number
/// (after a connective, "or one"; before "fewer" or "more"), not as a
/// pronoun ("the notes don't give one"). What only looks like a number
/// (a year, a date's day, a time) is read first, as one of [`not_numbers`].
///
/// With `units`, a number counts when it carries one of them, or when it
/// is offered on its own: next to a connective ("or 18 if ...") or ending a
/// clause. One followed by another word names something else ("for 1
/// handcart", "Fl(2)") and does not count. The result is several patterns
/// (any of them is a number), for the compiler to pack into matchers.
fn any_number(units: Option<&str>) -> Vec<Candidate> {
    // (Greedy: no digit can follow.)
    let digits = format!(r"(?<![\w.,])(?:\d+(?:{GROUP}\d{{3}})*(?:[.,]\d+)?|\.\d+)[\u00bc-\u00be]?");
    let words = [
        r"\b(?:twen|thir|for|four|fif|six|seven|eigh|nine)(?:ty|teen)\b",
        r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|hundred|thousand)\b",
    ];
    let offered_one = r"(?<=\b(?:or|and|to|than|maybe|perhaps)\s+)one\b|\bone(?=\s+(?:fewer|more|less)\b)";
    let mut out = Vec::new();
    match units {
        None => {
            out.push(Candidate::digits(digits));
            out.extend(words.map(Candidate::words));
        }
        Some(u) => {
            let before = format!(r"(?<=\b(?:{CONNECTIVES_BEFORE})\s+)");
            // (A mark that ends a clause, not a decimal point or separator:
            // the `17` of `17.3 mi` is no number ending a clause.)
            let after = format!(r"(?=\s*(?:[,;.!?](?!\d)|\n|$)|\s+(?:{CONNECTIVES})\b)");
            out.push(Candidate::digits(format!("{digits}{u}")));
            out.push(Candidate::digits(format!("{before}{digits}")));
            out.push(Candidate::digits(format!("{digits}{after}")));
            out.push(Candidate::words(format!(r"\bone\b{u}")));
            for w in words {
                out.push(Candidate::words(format!("{w}{u}")));
                out.push(Candidate::words(format!("{before}{w}")));
                out.push(Candidate::words(format!("{w}{after}")));
            }
        }
    }
    out.push(Candidate::words(offered_one));
    out
}

/// What a value on a number line is for, read as not a number of its own:
/// "9 tallies for 1 handcart", "3 per 2 crossings", "19 packets of 25
/// seeds" (a number after `for`, `per` or `of` that a word follows).
pub fn quantity_for() -> String {
    r"\b(?:for|per|of)\s+\d+(?=\s+[^\W\d_])|\d+(?=\s+[^\W\d_]+\s+(?:each|apiece)\b)".to_string()
}

/// What is read before numbers on a number line, as not a number of its
/// own: a date's day and year (`1 January`, `Oct 9`, `2031-10-09`, `1
/// Sleetmonth`), a time (`07:10`), a ratio (`24/7`), and a year (1900 to
/// 2099) unless `years`.
pub fn not_numbers(years: bool) -> String {
    // Month names by their first letters; a dot or dash is a separator.
    let month = r"(?:(?:jan|feb|ma[ry]|apr|ju[nl]|aug|sep|oct|nov|dec)[a-z]*|[a-z]+month\b)";
    let year = if years { "" } else { r"|(?<![\w.,])(?:19|20)\d\d(?!\d|[.,]\d)" };
    // A range of days before a month (`16–18 October`), of years
    // (`2031–32`), and a code of letters and a number (`CAM-2`) are no
    // numbers of their own either.
    format!(
        r"\b{month}[^\w\n]{{1,3}}\d\d?(?:st|nd|rd|th)?(?!\d|[.,]\d)|(?<![\w.,])(?:\d\d?[{DASHES}])?\d\d?{ORDINAL}(?: of)?[^\w\n]{{1,3}}{month}|(?:19|20)\d\d(?:[{DASHES}]\d\d(?:[{DASHES}]\d\d)?|/\d\d?/\d\d?|\.\d\d?\.\d\d?|[{DASHES}/](?:19|20)?\d\d(?!\d))|\d{{4}}[{DASHES}]\d\d(?:[{DASHES}]\d\d)?|\d\d?[./]\d\d?[./](?:\d{{4}}|\d\d)(?!\d)|\d\d?[:h]\d\d|(?<![\d,.])\d\d?/\d\d?(?![\d,.])|\b[a-z]+[{DASHES}]\d+\b{year}"
    )
}

// ---------------------------------------------------------------- times

/// A time as written in a source: `HH:MM`, 24-hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Time {
    pub hour: u32,
    pub minute: u32,
}

impl Time {
    pub fn parse(value: &str) -> Result<Time, String> {
        let bad = || format!("`{value}` is not a time (write 24-hour HH:MM, like 07:10 or 19:30)");
        let (h, m) = value.trim().split_once(':').ok_or_else(bad)?;
        let (hour, minute): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
        if hour > 23 || minute > 59 || m.len() != 2 {
            return Err(bad());
        }
        Ok(Time { hour, minute })
    }

    pub fn display(&self) -> String {
        format!("{:02}:{:02}", self.hour, self.minute)
    }
}

const HOUR_WORDS: [&str; 13] =
    ["twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
/// After an hour: the afternoon or evening half of the day.
const PM: &str = r"\s*(?:pm\b|p\.m\.|in the (?:afternoon|evening)\b|at night\b|tonight\b)";
/// After an hour: the morning half of the day.
const AM: &str = r"\s*(?:am\b|a\.m\.|in the morning\b)";

/// A time in any usual spelling.
pub fn time(t: Time) -> String {
    let (h, m) = (t.hour, t.minute);
    let mm = format!("{m:02}");
    // Digits or words followed by the other half of the day are another
    // time; the right half, or none, may follow.
    let other_half = if h < 12 { PM } else { AM };
    let suffix = if h >= 12 { PM } else { AM };
    let half = format!("(?:{suffix}|(?!{other_half}))");
    // 24-hour digits: 07:10, 7.10, 7h10, 0710 (and 7:10 am).
    let digits = if h < 10 { format!(r"0?{h}[:.h]{mm}|0{h}{mm}") } else { format!(r"{h}[:.h]?{mm}") };
    // 12-hour digits with their half: 7.30pm, 7 pm, 7.30 in the evening.
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let twelve = match m {
        0 => format!(r"|(?<![\w:.]){h12}(?:[:.]00)?{suffix}"),
        _ if h12 != h => format!(r"|(?<![\w:.]){h12}[:.]{mm}{suffix}"),
        _ => String::new(),
    };
    // Words: "noon", "seven o'clock", "seven ten a.m.", "six-twelve",
    // "ten past seven", "twelve minutes past six", "half seven".
    let hour_word = |hour: u32| HOUR_WORDS[(hour % 12) as usize];
    let mut spoken = Vec::new();
    match (h, m) {
        (12, 0) => spoken.push("(?:12 )?(?:noon|midday)|(?:twelve|12) o['\u{2019}]clock".to_string()),
        (0, 0) => spoken.push("midnight".to_string()),
        (_, 0) => spoken.push(format!("(?:{}|{h12}) (?:o['\u{2019}]clock|{})", hour_word(h), &suffix[3..])),
        _ => {
            // The hour and the minutes in words: "seven ten", "six oh five".
            let minutes = if m < 10 {
                format!("(?:o|oh|zero)[{DASHES} ]{}", UNITS[m as usize])
            } else {
                words_below_thousand(u64::from(m))
            };
            spoken.push(format!("{}[{DASHES} ]{minutes}", hour_word(h)));
        }
    }
    let minute_words = |n: u32| words_below_thousand(u64::from(n));
    // Words are joined by a space or a hyphen ("half-past seven").
    let past = |words: &str| format!("{words}[{DASHES} ](?:past|after)[{DASHES} ]{}", hour_word(h));
    let to = |words: &str| format!("{words}[{DASHES} ](?:to|before)[{DASHES} ]{}", hour_word(h + 1));
    match m {
        15 => spoken.push(past(&format!("(?:a[{DASHES} ])?quarter"))),
        30 => spoken.push(format!("{}|half[{DASHES} ]{}", past("half"), hour_word(h))),
        45 => spoken.push(to(&format!("(?:a[{DASHES} ])?quarter"))),
        _ => {}
    }
    // "ten past seven", "twelve minutes past six", "ten to seven".
    match m {
        0 | 30 => {}
        1..=29 => spoken.push(past(&format!("(?:{}|{m})(?:[{DASHES} ]minutes?)?", minute_words(m)))),
        _ => spoken.push(to(&format!("(?:{}|{})(?:[{DASHES} ]minutes?)?", minute_words(60 - m), 60 - m))),
    }
    format!(r"(?:(?:{CLOCK_START}(?:{digits})(?!\d)|\b(?:{})\b){half}{twelve})", spoken.join("|"))
}

/// Any time of day in clock digits: `19:30`, `7.30`, `7h30`.
pub fn any_clock_time() -> String {
    format!("{CLOCK_START}{CLOCK_TIME}")
}

/// Any time of day: clock digits, an hour with its half of the day (`2 pm`,
/// `two in the afternoon`), words (`noon`, `ten to seven`, `eight
/// o'clock`), and a bare hour where a time is offered ("or 2", "at 14").
fn any_time() -> Vec<String> {
    let hours = HOUR_WORDS[1..].join("|");
    let units = UNITS[1..10].join("|");
    let minutes =
        format!(r"(?:(?:twenty|thirty|forty|fifty)(?:[{DASHES} ](?:{units}))?|{}|\d\d?)", UNITS[1..].join("|"));
    let half = r"\s*(?:[ap]m\b|[ap]\.m\.|in the (?:morning|afternoon|evening)\b|at night\b)";
    let month = any_month();
    vec![
        any_clock_time(),
        format!(r"(?<![\w:.])(?:1[0-2]|0?[1-9])(?:[:.][0-5]\d)?{half}"),
        format!(r"\b(?:{hours}){half}"),
        format!(
            r"\b(?:noon|midday|midnight|(?:(?:a[{DASHES} ])?quarter|half|{minutes})[{DASHES} ](?:past|to)[{DASHES} ](?:{hours})|{minutes}[{DASHES} ]minutes?[{DASHES} ](?:past|to|after|before)[{DASHES} ](?:{hours})|half[{DASHES} ](?:{hours})|(?:{hours}|1[0-2]|0?[1-9]) o['\u2019]clock)\b"
        ),
        // The hour and minutes in words with the half of the day: "seven ten
        // a.m.", "six-twelve in the morning".
        format!(r"\b(?:{hours})[{DASHES} ](?:(?:o|oh|zero) )?{minutes}{half}"),
        format!(
            r"(?<=\b(?:at|or|from|until|till|by|before|after|around|about)\s+)(?:[01]?\d|2[0-4]|{hours})(?![\w:.,]|\s*(?:{month}|%|°|min|minutes?|hours?|hrs?|h\b|days?|weeks?|months?|years?))"
        ),
    ]
}

// ---------------------------------------------------------------- dates

/// A date as written in a source: ISO `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    pub year: u32,
    pub month: u32,
    pub day: u32,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Date {
    pub fn parse(value: &str) -> Result<Date, String> {
        let bad = || format!("`{value}` is not a date (write it as YYYY-MM-DD, like 2031-02-03)");
        let parts: Vec<&str> = value.trim().split('-').collect();
        let [y, m, d] = parts[..] else { return Err(bad()) };
        if y.len() != 4 || m.len() != 2 || d.len() != 2 {
            return Err(bad());
        }
        let (year, month, day) =
            (y.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?, d.parse().map_err(|_| bad())?);
        if !(1..=12).contains(&month) || day == 0 || day > days_in(month, year) {
            return Err(bad());
        }
        Ok(Date { year, month, day })
    }

    pub fn display(&self) -> String {
        format!("{} {} {}", self.day, MONTHS[self.month as usize - 1], self.year)
    }
}

/// A month's name, full or abbreviated (`Feb`, `Feb.`, `Sept`).
fn month_name(month: u32) -> String {
    let full = MONTHS[month as usize - 1];
    let (abbr, rest) = full.split_at(3);
    let tail = match month {
        9 => r"(?:t(?:ember)?)?".to_string(),
        5 => String::new(),
        _ => format!("(?:{rest})?"),
    };
    format!(r"{abbr}{tail}\b\.?")
}

/// Any month's name, by its first three letters (short, where a day number
/// beside it already says it is a date), or a month of the vaults' own
/// calendar (`Sleetmonth`, `Seedmonth`).
fn any_month() -> String {
    r"(?:(?:jan|feb|ma[ry]|apr|ju[nl]|aug|sep|oct|nov|dec)[a-z]*\.?|[a-z]+month\b)".to_string()
}

const ORDINAL: &str = r"(?:st|nd|rd|th)?";

/// Between the days of a list: a comma (with "and" or not), "and", `&`.
const LIST_SEP: &str = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)";

const ORDINAL_WORDS: [&str; 20] = [
    "",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
];

/// A day of the month as an ordinal word: `third`, `twenty-first`.
fn ordinal_words(day: u32) -> String {
    match day {
        1..=19 => ORDINAL_WORDS[day as usize].to_string(),
        20 => "twentieth".into(),
        30 => "thirtieth".into(),
        _ => format!("{}{}{}", TENS[(day / 10) as usize], word_hyphen(), ORDINAL_WORDS[(day % 10) as usize]),
    }
}

/// Any day of the month as an ordinal word.
fn any_ordinal_words() -> String {
    let units = ORDINAL_WORDS[1..10].join("|");
    format!(r"(?:(?:twenty|thirty)[{DASHES} ]?(?:{units})|{}|twentieth|thirtieth)", ORDINAL_WORDS[1..].join("|"))
}

/// A date in any usual spelling; a year, where one follows, must be its
/// year. A bare ordinal day (`the 9th`) counts: a writer who leaves the
/// month out means the one in question.
pub fn date(d: Date) -> String {
    let (y, m, day) = (d.year, d.month, d.day);
    let month = month_name(m);
    let year = year_after(y);
    let yy = y % 100;
    let ord = ordinal_words(day);
    let forms = [
        // (ISO 8601's date and time: `2031-10-09T19:30`.)
        format!(r"{y}(?:[{DASHES}]{m:02}[{DASHES}]{day:02}{ISO_END}|(?:/0?{m}/|\.0?{m}\.)0?{day}\b)"),
        format!(
            r"(?:(?:0?{day}{ORDINAL}|(?:the )?{ord})(?:\s+of)?[\s{DASHES}]+{month}|{month}\s+(?:0?{day}{ORDINAL}|(?:the )?{ord})\b){year}"
        ),
        format!(r"0?{day}/0?{m}(?:/(?:{y}|{yy:02})\b|(?![/\d]))"),
        format!(r"0?{day}\.0?{m}\.(?:{y}|{yy:02})\b"),
        // ISO's month and day without the year (`04-28`, under a column
        // that names the year): both in two digits, standing alone as a
        // table cell, a list's entry or a sentence's end does (not `10-12
        // volunteers`, a range).
        format!(r"{m:02}[{DASHES}]{day:02}(?=[ \t]*(?:[|),;:]|\.(?!\d)|\n|$)|[ \t]+\()"),
        // A bare ordinal ("on the 9th") where the month goes without saying;
        // one followed by a month is that month's.
        format!(r"0?{day}(?:st|nd|rd|th)\b(?![,\s]+(?:of\s+)?{any})", any = any_month()),
    ];
    format!(r"(?:{}{}|{}(?:{}))", iso_start(), forms[0], start(), forms[1..].join("|"))
}

/// A date stated anywhere in an answer: as [`date`] spells it, or as a day
/// in a list of days of one month ("6 and 30 June", "2, 11 and 30 May
/// 2031", "April 2 and 28", "June 6, 25 and 30, 2031"; the first day
/// after its month is the date `date` spells). On an answer line such a
/// list is several values, each read as the line reads values.
pub fn date_stated(d: Date) -> String {
    let (y, day, month) = (d.year, d.day, month_name(d.month));
    let year = year_after(y);
    let day_first =
        format!(r"0?{day}{ORDINAL}(?=(?:{LIST_SEP}\d{{1,2}}{ORDINAL})+(?:\s+of)?[\s{DASHES}]+{month}{year})");
    // (Not a count after the month: "April 2 and 28 volunteers".)
    let month_first = format!(
        r"(?<={month}\s+(?:\d\d?{ORDINAL}{LIST_SEP})+)0?{day}{ORDINAL}(?!\d|\s+(?!and\b)[a-z])(?=(?:{LIST_SEP}\d\d?{ORDINAL}\b)*{year})"
    );
    format!(r"(?:{}|{}(?:{day_first}|{month_first}))", date(d), start())
}

/// After a date's day and month: the right year, or none at all.
fn year_after(y: u32) -> String {
    format!(r"(?:,?[\s{DASHES}]+{y}\b|(?!,?[\s{DASHES}]+\d{{4}}\b|/))")
}

/// Before a date: no letter, digit or mark that makes it part of a longer
/// number or code (`1.3`, `12/3`, `x3`).
fn start() -> String {
    format!(r"(?<![\w/.{DASHES}])")
}
/// Before a date that starts with its four-digit year: the same, except
/// that a path's slash or a file name's underscore may come before it
/// (`runs/2031-04-02-lowri.md`, `log_2031-04-02`).
fn iso_start() -> String {
    format!(r"(?<![^\W_]|[.{DASHES}])")
}

/// After an ISO date's day: its end, or ISO 8601's `T` before the time.
const ISO_END: &str = r"(?:\b|(?=T\d))";
/// Before a time in clock digits: no letter, digit or mark of a longer
/// number, or ISO 8601's `T` after a date's day.
const CLOCK_START: &str = r"(?:(?<![\w:.])|(?<=\dT))";
/// Any time of day in clock digits: `19:30`, `7.30`, `7h30`.
const CLOCK_TIME: &str = r"(?:[01]?\d|2[0-3])[:.h][0-5]\d(?!\d|\.\d)";

/// Any date: ISO, day and month or month and day, numeric, or a bare
/// ordinal day.
fn any_date() -> Vec<String> {
    let month = any_month();
    let start = start();
    let ord = any_ordinal_words();
    vec![
        format!(
            r"{}\d{{4}}(?:[{DASHES}]\d{{2}}[{DASHES}]\d{{2}}{ISO_END}|(?:/\d\d?/\d\d?|\.\d\d?\.\d\d?)\b)",
            iso_start()
        ),
        format!(r"{start}(?:\d{{1,2}}{ORDINAL}|(?:the )?{ord})(?:\s+of)?[\s{DASHES}]+{month}"),
        format!(r"\b{month}\s+(?:\d{{1,2}}{ORDINAL}|(?:the )?{ord})\b"),
        format!(r"{start}\d{{1,2}}(?:/\d{{1,2}}(?:/\d{{2,4}})?|\.\d{{1,2}}\.\d{{2,4}})\b"),
        format!(r"{start}\d{{1,2}}(?:st|nd|rd|th)\b"),
    ]
}

// ---------------------------------------------------------------- text

/// The letter without its accent, for the letters of Western European names.
fn unaccented(c: char) -> Option<char> {
    const FROM: &str = "àáâãäåçèéêëìíîïñòóôõöøùúûüýÿ";
    const TO: &str = "aaaaaaceeeeiiiinoooooouuuuyy";
    let lower = c.to_lowercase().next()?;
    FROM.chars().position(|f| f == lower).and_then(|i| TO.chars().nth(i))
}

/// A text of digits (a phone number, a code like `0412`): digits with
/// spaces, dashes, dots or brackets between them, and at least four digits.
fn is_digit_string(value: &str) -> bool {
    let digits = value.chars().filter(char::is_ascii_digit).count();
    digits >= 4
        && value.chars().all(|c| {
            c.is_ascii_digit()
                || c.is_whitespace()
                || "().+".contains(c)
                || c == '-'
                || ('\u{2010}'..='\u{2015}').contains(&c)
                || c == '\u{2212}'
        })
}

/// How a text's spaces are spelled: as spaces only (labels and units,
/// which are copied rather than respelled, and keep their patterns short),
/// or also as a hyphen (`Class-14`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spaces {
    Plain,
    OrHyphen,
}

/// The inside of a text pattern, without boundaries.
fn text_body(value: &str) -> String {
    text_body_with(value, Spaces::OrHyphen)
}

fn text_body_with(value: &str, spaces: Spaces) -> String {
    if is_digit_string(value) {
        // Its digits in order, grouped and bracketed any way.
        let digits: Vec<String> = value.chars().filter(char::is_ascii_digit).map(String::from).collect();
        let joined = digits.join(r"[^\w\n]{0,3}");
        // A national number's leading 0 is also written as a country code
        // (`+44 1632 960418`, `+44 (0)1632 960418`).
        return match joined.strip_prefix('0') {
            Some(rest) if value.trim_start().starts_with('0') => {
                format!(r"(?:0|\+\d{{1,3}}[^\w\n]{{0,3}}(?:\(0\)[^\w\n]{{0,2}})?){rest}")
            }
            _ => joined,
        };
    }
    let chars: Vec<char> = value.trim().chars().collect();
    let mut out = String::new();
    let is_dash = |c: char| c == '-' || ('\u{2010}'..='\u{2015}').contains(&c) || c == '\u{2212}';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = i.checked_sub(1).map(|p| chars[p]);
        if c.is_whitespace() {
            while chars.get(i + 1).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
            let after = chars.get(i + 1).copied();
            // Around punctuation or between a letter and a digit a space is optional.
            let optional = prev.is_some_and(|p| !p.is_alphanumeric())
                || after.is_some_and(|a| !a.is_alphanumeric())
                || prev.zip(after).is_some_and(|(p, a)| letter_meets_digit(p, a));
            // A space may also be written as a hyphen (`Class-14`): the
            // hyphen only, for the patterns' length.
            out.push_str(match (spaces, optional) {
                (Spaces::Plain, true) => r"\s*",
                (Spaces::Plain, false) => r"\s+",
                (Spaces::OrHyphen, true) => r"[\s-]*",
                (Spaces::OrHyphen, false) => r"[\s-]+",
            });
        } else if is_dash(c) {
            let _ = write!(out, "[{DASHES} ]?");
        } else if matches!(c, '\'' | '\u{2018}' | '\u{2019}') {
            out.push_str("['\u{2018}\u{2019}]");
        } else if matches!(c, '"' | '\u{201c}' | '\u{201d}') {
            out.push_str("[\"\u{201c}\u{201d}]");
        } else if c == '.' && prev.is_some_and(char::is_alphabetic) {
            out.push_str(r"\.?");
        } else if matches!(c, '(' | ')' | '[' | ']' | '/') {
            // A space may come on either side of a bracket or slash: `Fl (2)`.
            let _ = write!(out, r"\s*{}\s*", escape(&c.to_string()));
        } else if c == ',' && spaces == Spaces::OrHyphen {
            // Parts of a text are set apart by a comma or any other mark
            // but a colon (a label's), or by nothing: `cabinet C, drawer
            // 14`, `cabinet C / drawer 14`, `cabinet C — drawer 14`,
            // `cabinet C drawer 14`; between two numbers by a comma, slash
            // or semicolon only (`12, 14` is no range `12–14`).
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if prev.is_some_and(|p| p.is_ascii_digit()) && next.is_some_and(char::is_ascii_digit) {
                out.push_str(r"(?:\s*[,/;]|(?=\s))");
            } else {
                out.push_str(r"(?:\s*[^\w\s:]|(?=\s))");
            }
        } else if let Some(run) = standalone_number(&chars, i).filter(|_| spaces == Spaces::OrHyphen) {
            // A small number standing apart in a text may be a word:
            // `SALLOW-6` is also `Sallow Six`.
            let digits: String = chars[i..i + run].iter().collect();
            let word = words_below_thousand(digits.parse().expect("ASCII digits"));
            let _ = write!(out, "(?:{digits}|{word})");
            i += run;
            continue;
        } else {
            // Between a letter and a digit (FV1, 15s) a space may come.
            if prev.is_some_and(|p| letter_meets_digit(p, c)) {
                out.push_str(" ?");
            }
            match unaccented(c) {
                Some(base) => {
                    let _ = write!(out, "[{c}{base}]");
                }
                None => out.push_str(&escape(&c.to_string())),
            }
            // An abbreviation may take a full stop the value does not write: `Fl.(2) W.`
            if c.is_alphabetic() && chars.get(i + 1).is_some_and(|n| n.is_whitespace() || "()[]/".contains(*n)) {
                out.push_str(r"\.?");
            }
        }
        i += 1;
    }
    out
}

/// A letter beside a digit (`FV1`, `15s`, `50 ms`): the space between them
/// may be left out, or put in.
fn letter_meets_digit(a: char, b: char) -> bool {
    a.is_alphanumeric() && b.is_alphanumeric() && a.is_alphabetic() != b.is_alphabetic()
}

/// The length of a run of one or two digits starting at `i` that stands
/// apart from letters and other digits (`6` in `SALLOW-6`, not `1` in
/// `FV1` nor `03` in `14-03`), if there is one.
fn standalone_number(chars: &[char], i: usize) -> Option<usize> {
    let run = chars[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let apart = |c: Option<&char>| c.is_none_or(|c| !c.is_alphanumeric() && !matches!(c, '.' | ','));
    (matches!(run, 1 | 2) && chars[i] != '0' && apart(i.checked_sub(1).map(|p| &chars[p])) && apart(chars.get(i + run)))
        .then_some(run)
}

/// A text in any case, dash, apostrophe and spacing (see the module documentation).
pub fn text(value: &str) -> String {
    text_with(value, Spaces::OrHyphen)
}

/// [`text`], its spaces spelled as `spaces` says.
pub fn text_with(value: &str, spaces: Spaces) -> String {
    let body = text_body_with(value, spaces);
    let trimmed = value.trim();
    let start = if trimmed.starts_with(|c: char| c.is_alphanumeric()) { r"(?<![\w])" } else { "" };
    // The plural or possessive of a code ending in a digit is the code:
    // "Class 14s", "C-41's".
    let end = match trimmed.chars().last() {
        Some(c) if c.is_ascii_digit() => r"(?:['\u2019]?s)?(?![\w])",
        Some(c) if c.is_alphanumeric() => r"(?![\w])",
        _ => "",
    };
    format!("{start}{body}{end}")
}

/// Any of several spellings of a text.
pub fn any_text(values: &[String]) -> String {
    alternatives(values.iter().map(|v| text(v)).collect())
}

fn alternatives(mut patterns: Vec<String>) -> String {
    patterns.dedup();
    match patterns.len() {
        1 => patterns.remove(0),
        _ => format!("(?:{})", patterns.join("|")),
    }
}

// ---------------------------------------------------------------- names

/// A person's name as a source writes it, given names first: `Odile
/// Brannigan-Sève`, or a surname alone (`Okafor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub given: Vec<String>,
    pub surname: String,
}

impl Name {
    pub fn parse(value: &str) -> Result<Name, String> {
        let mut parts: Vec<String> = value.split_whitespace().map(str::to_string).collect();
        let Some(surname) = parts.pop() else { return Err("an empty name".into()) };
        if !value.chars().any(char::is_alphabetic) || value.chars().any(|c| c.is_ascii_digit()) {
            return Err(format!("`{value}` is not a person's name (letters, given names first)"));
        }
        Ok(Name { given: parts, surname })
    }

    pub fn display(&self) -> String {
        let mut parts = self.given.clone();
        parts.push(self.surname.clone());
        parts.join(" ")
    }

    fn initial(&self) -> Option<char> {
        self.given.first().and_then(|g| g.chars().next())
    }

    fn same(a: &str, b: &str) -> bool {
        let fold = |s: &str| s.chars().map(|c| unaccented(c).unwrap_or(c).to_ascii_lowercase()).collect::<String>();
        fold(a) == fold(b)
    }

    /// The parts that name the person alone: given names and surname.
    fn parts(&self) -> Vec<&String> {
        self.given.iter().chain(std::iter::once(&self.surname)).collect()
    }
}

/// A text that ends where the name ends: not followed by a letter, nor by a
/// hyphen and a letter (`Dace Whitlock` is not `Dace Whitlock-Amari`).
fn name_text(value: &str) -> String {
    format!(r"(?<![\w]){}(?![\w]|[{DASHES}][^\W\d_])", text_body(value))
}

/// A person's name in its usual spellings: in full, with the first given
/// name as an initial (`O. Brannigan-Sève`), surname first (`Brannigan-Sève,
/// Odile`, `Brannigan-Sève, O.`) and the surname alone. A short form that
/// another candidate of the line shares (the surname of `Oda Frensham`
/// beside `Odile Frensham`) is left out: it would not say which is meant.
pub fn name(n: &Name, others: &[Name]) -> String {
    let Some(initial) = n.initial() else { return name_text(&n.display()) };
    let shares_surname = others.iter().any(|o| Name::same(&o.surname, &n.surname));
    let shares_initial = others.iter().any(|o| {
        Name::same(&o.surname, &n.surname)
            && o.initial().map(|c| c.to_ascii_lowercase()) == Some(initial.to_ascii_lowercase())
    });
    let surname = text_body(&n.surname);
    let given = text_body(&n.given.join(" "));
    let initial = escape(&initial.to_string());
    // Each part is written once (a name's spelling is long: accents,
    // dashes), the forms told apart by what comes before and after it.
    let (first, after) = if shares_initial {
        (given.clone(), format!(r",\s*{given}(?![\w])"))
    } else {
        (format!(r"(?:{given}(?![\w])|{initial}\.?)"), format!(r",\s*(?:{given}(?![\w])|{initial}\b\.?)"))
    };
    let end = format!(r"(?![\w]|[{DASHES}][^\W\d_])");
    if shares_surname {
        format!(r"(?<![\w])(?:{first}\s*{surname}{end}|{surname}{after})")
    } else {
        format!(r"(?<![\w])(?:{first}\s*)?{surname}(?:{after}|{end})")
    }
}

/// What finds another candidate's name on a line: any of its parts (the
/// surname alone, a given name alone) that none of the line's own names
/// has.
pub fn name_parts(other: &Name, own: &[Name]) -> Vec<String> {
    let shared = |part: &str| own.iter().any(|n| n.parts().iter().any(|p| Name::same(p, part)));
    let parts: Vec<String> =
        other.parts().into_iter().filter(|p| p.chars().count() > 1 && !shared(p)).map(|p| name_text(p)).collect();
    if parts.is_empty() { vec![name_text(&other.display())] } else { parts }
}

// ---------------------------------------------------------------- words

/// One word in its inflections: `fog`, `fogs`, `foggy`, `fogged`;
/// `practise`, `practising`; `accession`, `accessions`.
fn inflected(word: &str) -> String {
    let w = word.to_lowercase();
    let chars: Vec<char> = w.chars().collect();
    if chars.len() < 3 || !chars.iter().all(|c| c.is_ascii_alphabetic()) {
        return text_body(word);
    }
    let vowel = |c: char| "aeiou".contains(c);
    let n = chars.len();
    let mut forms = vec![format!("{w}(?:s|es|ed|d|ing|y|ier|iest|er|ers|est|ly)?")];
    let stem: String = chars[..n - 1].iter().collect();
    let last = chars[n - 1];
    if last == 'e' {
        forms.push(format!("{stem}(?:ing|ed|es|er|ers|y)"));
    }
    if last == 'y' && !vowel(chars[n - 2]) {
        forms.push(format!("{stem}i(?:es|ed|er|ers|est|ly)"));
    }
    // A short vowel before a final consonant doubles it: fog, foggy.
    if !vowel(last) && !"wxy".contains(last) && vowel(chars[n - 2]) && (n < 3 || !vowel(chars[n - 3])) {
        forms.push(format!("{w}{last}(?:y|ed|ing|er|ers|ier|iest)"));
    }
    alternatives(forms)
}

/// A keyword or a phrase of them, each word in any inflection, as a text
/// otherwise (`fog` finds `foggy` and `fog-horn`; `accession register`
/// finds `accessions register`).
pub fn word(value: &str) -> String {
    let words: Vec<&str> = value.split_whitespace().collect();
    let mut body = String::new();
    for (i, w) in words.iter().enumerate() {
        if let Some(prev) = i.checked_sub(1).map(|p| words[p]) {
            // Between a number and a word a space may be left out (`50ms`),
            // as in a text.
            let joined = prev.chars().last().zip(w.chars().next()).is_some_and(|(p, c)| letter_meets_digit(p, c));
            body.push_str(if joined { r"\s*" } else { r"\s+" });
        }
        body.push_str(&inflected(w));
    }
    format!(r"(?<![\w]){body}(?![\w])")
}

/// Any of several keywords.
pub fn any_word(values: &[String]) -> String {
    alternatives(values.iter().map(|v| word(v)).collect())
}

// ---------------------------------------------------------------- candidates

/// A pattern that finds a value of a kind on an answer line. A number in
/// words is read apart from numbers in digits: what a line must read first
/// (its own values, dates, working) differs for each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub pattern: String,
    /// A number in words (`twelve`, `one fewer`).
    pub in_words: bool,
}

impl Candidate {
    fn digits(pattern: impl Into<String>) -> Candidate {
        Candidate { pattern: pattern.into(), in_words: false }
    }

    fn words(pattern: impl Into<String>) -> Candidate {
        Candidate { pattern: pattern.into(), in_words: true }
    }
}

/// What an answer line may hold besides its own values: the patterns that
/// find any value of `kind` (for text, the line's `others`, already
/// spelled), any of which is a second value. `None` when nothing of the
/// kind can be recognised. With `units`, see [`any_number`].
pub fn candidates(kind: Kind, units: Option<&str>, others: &[String]) -> Option<Vec<Candidate>> {
    match kind {
        Kind::Number => Some(any_number(units)),
        Kind::Time => Some(any_time().into_iter().map(Candidate::digits).collect()),
        Kind::Date => Some(any_date().into_iter().map(Candidate::digits).collect()),
        Kind::Text if others.is_empty() => None,
        Kind::Text => Some(others.iter().map(Candidate::digits).collect()),
    }
}

/// Whether a number line should count years among its values.
pub fn counts_years(expected: &[Number]) -> bool {
    expected.iter().any(Number::is_year)
}

/// Working written on an answer line: an arithmetic chain in brackets or
/// ending in `=` (`(412 + 388 + 295)`, `412 + 388 + 295 =`). Its operands
/// are not other values; what it equals is read as any value.
pub fn working() -> String {
    // A number, and the unit a writer may repeat after it (`295 litres`).
    let n = r"\d[\d,.]*(?:\s?[a-z]{1,12})?";
    // Operators as signs (a spaced hyphen or en dash for minus), "plus", or
    // an arrow from one value to another. (The signs written as
    // themselves, not escaped: a pattern's length is counted in characters.)
    let op = r"(?:[+−×x*→]|->|\s[-–]\s|plus)";
    let chain = format!(r"{n}(?:\s*{op}\s*{n})+");
    // A bracket that opens with a chain is working whole, with the words a
    // writer puts around its numbers: what they count (`2 regulars + 2
    // stand-ins`), a symbol before one (`V 11.42 → V 12.07`), a comment
    // after the chain (`412 + 388 + 295, the Wren's three receipts`).
    let operand = r"(?:[a-z]{1,3}\s?)?\d";
    let bracket = format!(r"\((?=\s*{operand}[\d,.]*(?:\s?[a-z'{DASHES}]+){{0,3}}\s*{op}\s*{operand})[^()\n]*\)");
    // In brackets, before `=`, or after it (`26.5 hours = 3.5 + 4.25 + ...`).
    format!(r"{bracket}|\(?{chain}\s*[)=]|=\s*{chain}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{Just, Strategy};
    use regress::Regex;

    /// Does `pattern` (flag i) find a match in `text`, as a run reads it?
    fn finds(pattern: &str, text: &str) -> bool {
        let re = crate::score::jsregex::JsRegex::new(pattern, Some("i")).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        re.test(text)
    }

    impl AsRef<str> for Candidate {
        fn as_ref(&self) -> &str {
            &self.pattern
        }
    }

    /// Does any of `patterns` find a match in `text`?
    fn finds_any(patterns: &[impl AsRef<str>], text: &str) -> bool {
        patterns.iter().any(|p| finds(p.as_ref(), text))
    }

    fn num(v: &str) -> String {
        number(&Number::parse(v).unwrap())
    }

    #[test]
    fn numbers_in_every_usual_spelling() {
        let p = num("1396");
        for yes in [
            "1396 litres",
            "1,396",
            "1 396",
            "1\u{202f}396",
            "(1,396)",
            "one thousand three hundred and ninety-six",
            "One thousand, three hundred and ninety six",
        ] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["11,396", "1,3960", "1396.5", "21396", "1.396"] {
            assert!(!finds(&p, no), "{no}");
        }
        let p = num("26.5");
        for yes in [
            "26.5 hours",
            "26.50",
            "26,5",
            "26,50 h",
            "26½ hours",
            "26 ½",
            "twenty-six and a half hours",
            "26 and a half hours",
        ] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["26", "26.55", "26,500", "126.5", "26.51", "26¼", "6½"] {
            assert!(!finds(&p, no), "{no}");
        }
        // A whole number with a fraction after it is another number.
        let p = num("26");
        for no in ["26 and a half hours", "26½", "26 ½", "26 1/2", "twenty-six and a half"] {
            assert!(!finds(&p, no), "{no}");
        }
        assert!(finds(&p, "26 and a few more") && finds(&p, "26, and a half-day off"));
        let p = num("38.50");
        assert!(finds(&p, "£38.50") && finds(&p, "38.5") && !finds(&p, "38"));
        let p = num("5");
        for yes in ["Five: Wendmoor kale", "5 notes", "five.", "5.00"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["fifteen", "5,000", "25", "5.5", "T5"] {
            assert!(!finds(&p, no), "{no}");
        }
        assert!(finds(&num("24"), "twenty\u{2011}four") && finds(&num("24"), "twenty four"));
        assert!(finds(&num("4850"), "4,850") && finds(&num("4850"), "four thousand eight hundred and fifty"));
        assert!(finds(&num("100"), "a hundred") && finds(&num("1,095"), "one thousand and ninety-five"));
        // A decimal below one may leave out its zero.
        let p = num("0.4098");
        for yes in ["0.4098″ per pixel", ".4098″ per pixel", "(.4098)", "0.40980"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["1.4098", "0.40981", "x.4098", ".409"] {
            assert!(!finds(&p, no), "{no}");
        }
        assert!(finds(&num("0.5"), "½ hour") && finds(&num("3.75"), "3¾ h") && finds(&num("4.25"), "4¼"));
        // A decimal comma with more digits, where they cannot be thousands.
        assert!(finds(&num("0.4098"), "0,4098″") && finds(&num("12.3456"), "12,3456"));
        assert!(!finds(&num("26.5"), "26,500") && !finds(&num("1.396"), "1,396"));
        // A typed fraction; hours with minutes.
        for yes in ["26 1/2 hours", "26 hours 30 minutes", "26 h 30 min", "26 hrs, 30 mins"] {
            assert!(finds(&num("26.5"), yes), "{yes}");
        }
        for no in ["26 1/4", "261/2", "26 hours 15 minutes", "26 hours 30 seconds"] {
            assert!(!finds(&num("26.5"), no), "{no}");
        }
        assert!(finds(&num("4.25"), "4 h 15 min") && finds(&num("0.75"), "3/4") && finds(&num("0.5"), "1/2"));
        // An extension's x.
        assert!(finds(&num("4417"), "x4417") && finds(&num("4417"), "ext. 4417") && !finds(&num("4417"), "ax4417"));
        assert_eq!(Number::parse("1,095").unwrap().display(), "1095");
        assert_eq!(Number::parse("12095").unwrap().display(), "12,095");
        let alone = number_alone(&Number::parse("12").unwrap());
        for no in ["2031-10-12", "12 October", "10:12", "12-Oct-2031", "12 Sleetmonth"] {
            assert!(!finds(&alone, no), "{no}");
        }
        assert!(finds(&alone, "12 boxes"));
        assert!(Number::parse("12a").is_err() && Number::parse("").is_err() && Number::parse("1.2.3").is_err());
    }

    #[test]
    fn a_number_is_stated_inside_a_range_of_its_list_unless_excepted() {
        let list: Vec<Number> = ["122", "123", "125", "126", "127"].iter().map(|n| Number::parse(n).unwrap()).collect();
        let stated = |n: &str| number_stated(&Number::parse(n).unwrap(), &list);
        let text = "Counted: production batches 122 to 127 except the dumped 124, all brewed in the quarter.";
        for n in ["122", "123", "125", "126", "127"] {
            assert!(finds(&stated(n), text), "{n}");
        }
        assert!(finds(&stated("126"), "batches 122 to 127 except 124"));
        assert!(finds(&stated("125"), "batches 122–127"));
        // Only between numbers of the list: 120 is not in it.
        assert!(!finds(&stated("123"), "batches 120 to 124"));
    }

    #[test]
    fn units_name_their_whole_family() {
        let p = |value: &str, unit: &[&str]| {
            let u: Vec<String> = unit.iter().map(|s| s.to_string()).collect();
            with_units(&num(value), &units(&u))
        };
        let crossing = p("35", &["min"]);
        for yes in ["35 min", "35 minutes", "35m", "35 mins", "35-minute", "Crossing: 35", "35."] {
            assert!(finds(&crossing, yes), "{yes}");
        }
        for no in ["35 hours", "35 miles", "35 km"] {
            assert!(!finds(&crossing, no), "{no}");
        }
        let length = p("27.9", &["km"]);
        for yes in ["27.9 km", "27.9 kilometres", "27.9 kilometers", "27.9km", "27.9 kms"] {
            assert!(finds(&length, yes), "{yes}");
        }
        let yield_ = p("61", &["kg"]);
        for yes in ["61 kg", "61 kilogrammes", "61 kilograms", "61 kilos"] {
            assert!(finds(&yield_, yes), "{yes}");
        }
        assert!(finds(&p("9", &["tally"]), "9 tallies") && finds(&p("9", &["tallies"]), "9 tally"));
        assert!(finds(&p("16", &["M"]), "16 nautical miles") && finds(&p("16", &["nautical mile"]), "16 M"));
        let water = p("780", &["g"]);
        for yes in ["780 g", "780g", "780 grams", "780 grammes", "Water: 780"] {
            assert!(finds(&water, yes), "{yes}");
        }
        for no in ["780 gallons", "780 kg", "780 ml"] {
            assert!(!finds(&water, no), "{no}");
        }
        let share = p("78", &["%"]);
        for yes in ["78%", "78 %", "78 percent", "78 per cent"] {
            assert!(finds(&share, yes), "{yes}");
        }
        assert!(finds(&p("40", &["mm"]), "40 millimetres") && !finds(&p("40", &["mm"]), "40 metres"));
        // A unit of no family is taken as written.
        assert!(finds(&p("3", &["packet"]), "3 packets") && !finds(&p("3", &["packet"]), "3 boxes"));
    }

    #[test]
    fn times_in_every_usual_spelling() {
        let p = time(Time::parse("07:10").unwrap());
        for yes in ["07:10", "7:10", "7.10", "7h10", "0710", "7:10 am", "7.10am", "7:10 a.m.", "ten past seven"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["17:10", "07:100", "7:10 pm", "ten past eight", "1:07:10", "7.10 in the evening"] {
            assert!(!finds(&p, no), "{no}");
        }
        let p = time(Time::parse("19:30").unwrap());
        for yes in ["19:30", "1930", "7:30 pm", "7.30pm", "half past seven", "7.30 in the evening", "7:30 at night"] {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(!finds(&p, "7:30 am") && !finds(&p, "7.30 in the morning"));
        // Spoken words joined by hyphens.
        for yes in ["half-past seven in the evening", "half-seven"] {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(!finds(&p, "half-past eight") && !finds(&p, "half-past seven in the morning"));
        // ISO 8601's date and time.
        assert!(finds(&p, "2031-10-09T19:30") && !finds(&p, "x19:30") && !finds(&p, "AT19:30"));
        let p = time(Time::parse("07:15").unwrap());
        assert!(finds(&p, "quarter-past seven") && finds(&p, "fifteen-minutes-past seven"));
        let p = time(Time::parse("12:00").unwrap());
        for yes in ["12:00", "noon", "midday", "12 noon", "12 pm", "12pm"] {
            assert!(finds(&p, yes), "{yes}");
        }
        let p = time(Time::parse("14:00").unwrap());
        for yes in ["2 pm", "two o’clock", "two o'clock", "two in the afternoon", "2 in the afternoon"] {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(Time::parse("24:00").is_err() && Time::parse("7:5").is_err() && Time::parse("seven").is_err());
    }

    #[test]
    fn times_spoken_as_hours_and_minutes() {
        let p = time(Time::parse("07:10").unwrap());
        for yes in
            ["seven ten a.m.", "seven-ten in the morning", "seven ten", "ten minutes past seven", "10 past seven"]
        {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["seven ten p.m.", "seven-ten in the evening", "eight ten", "seven twenty", "ten minutes past eight"]
        {
            assert!(!finds(&p, no), "{no}");
        }
        let p = time(Time::parse("06:12").unwrap());
        for yes in ["six-twelve a.m.", "twelve minutes past six in the morning", "12 minutes past six", "06:12"] {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(!finds(&p, "six-twelve pm") && !finds(&p, "six twenty"));
        let p = time(Time::parse("06:05").unwrap());
        assert!(finds(&p, "six oh five") && finds(&p, "six o five am") && !finds(&p, "six oh five pm"));
        let p = time(Time::parse("12:00").unwrap());
        for yes in ["12 o'clock", "twelve o\u{2019}clock", "from twelve o'clock"] {
            assert!(finds(&p, yes), "{yes}");
        }
        let p = time(Time::parse("17:45").unwrap());
        for yes in ["quarter to six in the evening", "five forty-five pm", "fifteen minutes to six", "5.45 pm"] {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(!finds(&p, "quarter to six in the morning") && !finds(&p, "5.45 am"));
        let p = time(Time::parse("19:30").unwrap());
        assert!(finds(&p, "half seven") && finds(&p, "seven thirty pm") && !finds(&p, "half eight"));
        // Any time, spoken, is a second time on a time line.
        let any = any_time();
        for yes in ["seven ten a.m.", "twelve minutes past six", "half seven", "12 o'clock", "six oh five pm"] {
            assert!(finds_any(&any, yes), "{yes}");
        }
        for no in ["up to seven boats", "seven ten-minute breaks", "ten minutes"] {
            assert!(!finds_any(&any, no), "{no}");
        }
    }

    #[test]
    fn dates_in_every_usual_spelling() {
        let p = date(Date::parse("2031-02-03").unwrap());
        for yes in [
            "2031-02-03",
            "3 February 2031",
            "3rd of February 2031",
            "3rd February",
            "Feb 3",
            "February 3rd, 2031",
            "3 Feb.",
            "03/02/2031",
            "3/2/31",
            "03.02.2031",
            "03-Feb-2031",
            "3-Feb",
            "Mon 3 Feb",
            "on the 3rd",
        ] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in [
            "3 February 2032",
            "13 February",
            "2031-02-13",
            "3/12",
            "Feb 30",
            "23 Feb",
            "February 3, 2030",
            "03-Feb-2032",
            "3rd March",
            "the 13th",
            "3.2",
        ] {
            assert!(!finds(&p, no), "{no}");
        }
        // A day in a list of days of one month, stated anywhere.
        let p = date_stated(Date::parse("2031-06-06").unwrap());
        for yes in ["6 and 30 June", "6, 25 and 30 June 2031", "the 6th & 30th of June", "6 and 30 June (both)"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["6 and 30 July", "16 and 30 June", "6 and 30 June 2030", "6 and 300 June"] {
            assert!(!finds(&p, no), "{no}");
        }
        // A later day in a list of days after their month.
        let p = date_stated(Date::parse("2031-04-28").unwrap());
        for yes in ["April 2 and 28", "April 2 and 28, May 11", "Apr 2, 11 and 28, 2031", "April 2nd & 28th"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in [
            "April 2 and 28 volunteers",
            "May 2 and 28",
            "April 2 and 28, 2030",
            "April 2 and 280",
            "April 2 and 128",
            "April 28 2030",
        ] {
            assert!(!finds(&p, no), "{no}");
        }
        // ISO's month and day without its year, both in two digits.
        let p = date(Date::parse("2031-04-28").unwrap());
        for yes in ["04-28", "| 04-28 | Mirela Costa |", "on 04\u{2013}28.", "2031-04-28"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in [
            "2030-04-28",
            "04-28-2030",
            "4-28",
            "04-280",
            "04-28.5",
            "104-28",
            "x04-28",
            "28-04",
            "04-28/30",
            // A range of counts is no date.
            "we expect 04-28 volunteers",
        ] {
            assert!(!finds(&p, no), "{no}");
        }
        let p = date(Date::parse("2031-09-06").unwrap());
        assert!(finds(&p, "6 Sept") && finds(&p, "Sep 6th") && finds(&p, "6th of September"));
        assert!(finds(&date(Date::parse("2031-05-11").unwrap()), "11 May"));
        // Year first with slashes or dots; the day as an ordinal word.
        let p = date(Date::parse("2031-02-03").unwrap());
        for yes in
            ["2031/02/03", "2031/2/3", "2031.02.03", "the third of February 2031", "February the third", "third Feb"]
        {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["2031/02/13", "2031/03/02", "2032/02/03", "the third of March", "the thirteenth of February"] {
            assert!(!finds(&p, no), "{no}");
        }
        let p = date(Date::parse("2031-11-19").unwrap());
        assert!(finds(&p, "the nineteenth of November 2031") && !finds(&p, "the nineteenth of November 2030"));
        let p = date(Date::parse("2031-10-21").unwrap());
        assert!(
            finds(&p, "twenty-first of October") && finds(&p, "October twenty first") && !finds(&p, "first of October")
        );
        // A bare ordinal followed by another month, after a comma too, is that month's.
        let p = date(Date::parse("2031-10-09").unwrap());
        assert!(finds(&p, "Thursday 9th") && !finds(&p, "Thursday 9th, November 2031"));
        // Any dash between an ISO date's parts; a path's slash or a file
        // name's underscore before it, a hyphen and a name after it.
        let p = date(Date::parse("2031-02-03").unwrap());
        for yes in
            ["2031\u{2011}02\u{2011}03", "2031\u{2013}02\u{2013}03", "runs/2031-02-03-lowri.md", "log_2031-02-03"]
        {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(finds(&p, "2031-02-03T19:30") && !finds(&p, "2031-02-03X"));
        for no in ["x2031-02-03", "12031-02-03", "1.2031-02-03", "2031-02-031"] {
            assert!(!finds(&p, no), "{no}");
        }
        let any = any_date();
        for yes in ["runs/2031\u{2011}02\u{2011}03-lowri.md", "2031\u{2011}02\u{2011}03"] {
            assert!(finds_any(&any, yes), "{yes}");
        }
        for yes in ["2031/02/03", "the third of February", "Feb the 3rd", "twenty-second of May"] {
            assert!(finds_any(&any, yes), "{yes}");
        }
        assert!(Date::parse("2031-02-30").is_err() && Date::parse("3 Feb").is_err());
        assert_eq!(Date::parse("2031-10-09").unwrap().display(), "9 October 2031");
    }

    #[test]
    fn text_in_any_case_dash_quote_accent_and_space() {
        let p = text("Jago Penrose-Adair");
        for yes in ["jago penrose-adair", "Jago Penrose\u{2011}Adair", "Jago  Penrose Adair", "**Jago Penrose–Adair**"]
        {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(!finds(&p, "Jago Penrose-Adairs"));
        // A space is also written as a hyphen.
        for (value, written) in [("Class 14", "Class-14s"), ("Jago Penrose-Adair", "Jago-Penrose-Adair")] {
            assert!(finds(&text(value), written), "{written}");
        }
        let p = text("Morrow's Flame");
        assert!(finds(&p, "Morrow’s Flame") && finds(&p, "MORROW'S FLAME"));
        let p = text("Fl(2) W 15s");
        for yes in ["Fl(2) W 15s", "Fl (2) W 15 s", "Fl(2)W15s", "Fl.(2) W. 15s"] {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(!finds(&p, "Fl(2) W 5s") && !finds(&p, "Fl(2) W 150s"));
        assert!(
            finds(&text("FV1"), "FV 1")
                && finds(&text("Bramble-3"), "Bramble 3")
                && !finds(&text("Bramble-3"), "Bramble-30")
        );
        assert!(finds(&text("a+b (c)"), "A+B (c)"));
        assert!(finds(&text("Odile Brannigan-Sève"), "Odile Brannigan-Seve"));
        assert!(finds(&text("Sève"), "SÈVE") && finds(&text("Sève"), "SEVE"));
        // A small number standing apart is also a word; one inside a code is not.
        let p = text("SALLOW-6");
        assert!(finds(&p, "Sallow Six") && finds(&p, "SALLOW-six") && !finds(&p, "Sallow Sixteen"));
        assert!(!finds(&text("FV1"), "FV one") && !finds(&text("14-03"), "fourteen-three"));
        assert!(finds(&text("C-14"), "C fourteen") && finds(&text("Class 22"), "Class twenty-two"));
        // A comma between parts is also a slash, a semicolon or nothing.
        let p = text("cabinet C, drawer 14");
        assert!(
            finds(&p, "cabinet C / drawer 14")
                && finds(&p, "Cabinet C; drawer 14")
                && finds(&p, "cabinet C drawer 14")
                && !finds(&p, "cabinet C drawer 41")
                && !finds(&p, "cabinet C: drawer 14")
        );
        // Left out, the comma leaves white space: two numbers do not join.
        let p = text("Flat 3, 12 Harbour Road");
        assert!(finds(&p, "flat 3 12 Harbour Road") && !finds(&p, "Flat 312 Harbour Road"));
    }

    #[test]
    fn digits_in_any_grouping() {
        let p = text("01632 960418");
        for yes in ["01632 960418", "(01632) 960418", "01632 960 418", "01632-960418", "01632960418", "0163 296 0418"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["01632 960417", "101632 960418", "01632 9604189"] {
            assert!(!finds(&p, no), "{no}");
        }
        let other = text("960771");
        assert!(finds(&other, "01632 960 771") && finds(&other, "960771"));
        // Codes with letters keep the text rules.
        assert!(!finds(&text("C-14"), "C-141"));
    }

    fn name_of(s: &str) -> Name {
        Name::parse(s).unwrap()
    }

    #[test]
    fn names_in_full_with_an_initial_surname_first_or_alone() {
        let odile = name(&name_of("Odile Brannigan-Sève"), &[name_of("Kwame Thorsby")]);
        for yes in [
            "Odile Brannigan-Sève",
            "O. Brannigan-Sève",
            "O Brannigan-Seve",
            "Brannigan-Sève, Odile",
            "Brannigan-Sève, O.",
            "Brannigan-Sève",
        ] {
            assert!(finds(&odile, yes), "{yes}");
        }
        assert!(!finds(&odile, "Odile Brannigan") && !finds(&odile, "Brannigan-Sèves"));
        // A short form another candidate shares says nothing.
        let odile = name(&name_of("Odile Frensham"), &[name_of("Oda Frensham")]);
        assert!(finds(&odile, "Odile Frensham") && finds(&odile, "Frensham, Odile"));
        for no in ["Frensham", "O. Frensham", "Oda Frensham"] {
            assert!(!finds(&odile, no), "{no}");
        }
        let dace = name(&name_of("Dace Whitlock"), &[]);
        assert!(!finds(&dace, "Dace Whitlock-Amari") && finds(&dace, "Whitlock, Dace;"));
        assert!(finds(&name(&name_of("Okafor"), &[]), "Sidonie Okafor"));
        // Another candidate is found by any part of its name it does not share.
        let parts = name_parts(&name_of("Oda Frensham"), &[name_of("Odile Frensham")]);
        assert!(finds_any(&parts, "Oda") && !finds_any(&parts, "Frensham"));
        let parts = name_parts(&name_of("Kwame Thorsby"), &[name_of("Odile Brannigan-Sève")]);
        for yes in ["Kwame may still sign", "Thorsby", "Kwame Thorsby"] {
            assert!(finds_any(&parts, yes), "{yes}");
        }
        assert!(Name::parse("").is_err() && Name::parse("R2-14").is_err());
    }

    #[test]
    fn words_in_any_inflection() {
        let fog = word("fog");
        for yes in ["fog", "Foggy mornings", "fogs", "fogged in", "fog-horn"] {
            assert!(finds(&fog, yes), "{yes}");
        }
        for no in ["befog", "fogey", "frog"] {
            assert!(!finds(&fog, no), "{no}");
        }
        let practise = word("practise");
        for yes in ["practising", "practised", "practises", "practise"] {
            assert!(finds(&practise, yes), "{yes}");
        }
        let p = word("accession register");
        assert!(finds(&p, "the accessions register") && finds(&p, "Accession Register") && !finds(&p, "accession's"));
        assert!(finds(&word("supply"), "supplies") && finds(&word("drill"), "drills"));
        // Between a number and a word a space may be left out, as in a text.
        let ms = word("50 ms");
        for yes in ["50 ms", "every 50ms", "fifty ms"] {
            assert!(finds(&ms, yes), "{yes}");
        }
        for no in ["150ms", "50 msg", "5 0ms"] {
            assert!(!finds(&ms, no), "{no}");
        }
        assert!(!finds(&word("back off"), "backoff") && finds(&word("back off"), "backing off"));
    }

    #[test]
    fn parts_of_a_text_may_be_set_apart_by_a_dash() {
        let drawer = text("cabinet C, drawer 14");
        for yes in [
            "Cabinet C — drawer 14",
            "cabinet C – drawer 14",
            "cabinet C, drawer 14",
            "cabinet C drawer 14",
            "cabinet C; drawer 14",
        ] {
            assert!(finds(&drawer, yes), "{yes}");
        }
        assert!(!finds(&drawer, "cabinet C drawer 41"));
        // Not between two numbers: `12, 14` is no range.
        let pair = text("12, 14");
        assert!(finds(&pair, "12, 14") && !finds(&pair, "12–14") && !finds(&pair, "12-14"));
    }

    #[test]
    fn candidates_find_values_of_the_kind() {
        let n = candidates(Kind::Number, None, &[]).unwrap();
        for yes in ["9", "1,396", "26.5", "twelve", "Twenty", ".412", "3½", "or one fewer", "maybe one"] {
            assert!(finds_any(&n, yes), "{yes}");
        }
        for no in ["T31", "the notes don't give one", "no one", "the Playhouse"] {
            assert!(!finds_any(&n, no), "{no}");
        }
        assert!(finds_any(&n, "9-12") && finds_any(&n, "from 1 to 9 January"));
        // Dates, times, ratios and years are read before the candidates on a
        // line (as one token each), so nothing inside them is a number.
        let read_first = Regex::with_flags(&format!("^(?:{})$", not_numbers(false)), "i").unwrap();
        for whole in [
            "2032",
            "1 January",
            "Oct 9th",
            "2031-10-09",
            "2031\u{2011}10\u{2011}09",
            "07:10",
            "7h10",
            "24/7",
            "1 Sleetmonth",
            "03-Feb",
        ] {
            assert!(read_first.find(whole).is_some(), "{whole}");
        }
        // A day is one or two digits alone: "Sept: 1,396" holds no date.
        let read = Regex::with_flags(&not_numbers(false), "i").unwrap();
        assert_eq!(read.find("Sept: 1,396").map(|m| m.range()), None);
        // A phone number with its country code for the leading 0.
        let phone = text("01632 960418");
        for yes in ["01632 960418", "+44 1632 960418", "+44 (0)1632 960 418", "(01632) 960418"] {
            assert!(finds(&phone, yes), "{yes}");
        }
        assert!(!finds(&phone, "+44 1632 960419") && !finds(&phone, "101632 960418"));
        let ten = time(Time { hour: 10, minute: 0 });
        assert!(finds(&ten, "10 o'clock in the morning") && finds(&ten, "ten o’clock"));
        let with_years = Regex::with_flags(&format!("^(?:{})$", not_numbers(true)), "i").unwrap();
        assert!(with_years.find("2032").is_none(), "a year is a value where the line's value is one");
        let quantity = Regex::with_flags(&format!("^(?:{})", quantity_for()), "i").unwrap();
        assert!(quantity.find("for 1 handcart").is_some() && quantity.find("for 12").is_none());
        // What a value is counted in ("25 seeds each"), read as a regress
        // run reads it (a class with \W under i).
        let each = format!("^(?:{})", quantity_for());
        assert!(finds(&each, "25 seeds each") && finds(&each, "3 kilos apiece") && !finds(&each, "25 seeds"));
        // Ranges of days and years, and codes, are read first too.
        let whole = format!("^(?:{})$", not_numbers(false));
        for yes in ["16–18 October", "2031–32", "2031/2032", "CAM-2", "Class-14"] {
            assert!(finds(&whole, yes), "{yes}");
        }
        assert!(!finds(&whole, "16–18") && !finds(&whole, "12-14"));
        // A day-first dotted date is read whole; a ratio of large numbers is
        // two numbers.
        assert!(finds(&whole, "03.02.2031") && finds(&whole, "09.10.31") && !finds(&whole, "5540/5590"));
        assert!(!finds_any(&candidates(Kind::Time, None, &[]).unwrap(), "09.10.2031"));
        // With units: numbers with one, and numbers offered on their own.
        let with_unit = candidates(Kind::Number, Some(&units(&["M".into(), "nautical mile".into()])), &[]).unwrap();
        for yes in ["18 M", "16 nautical miles", "or 18 if the newsletter is right", "16 to 18", "18.", "eighteen"] {
            assert!(finds_any(&with_unit, yes), "{yes}");
        }
        for no in ["Fl(2) W 15s", "for 1 handcart", "notice 14 says"] {
            assert!(!finds_any(&with_unit, no), "{no}");
        }
        let t = candidates(Kind::Time, None, &[]).unwrap();
        for yes in [
            "06:50",
            "5.40",
            "7 pm",
            "noon",
            "ten to seven",
            "eight o'clock",
            "eight o’clock",
            "or 2 if we end up back",
            "two in the afternoon",
            "at 14",
        ] {
            assert!(finds_any(&t, yes), "{yes}");
        }
        for no in ["35 minutes", "26.5", "from 1 Sleetmonth", "for 2 hours", "a crew of 4", "by 2031"] {
            assert!(!finds_any(&t, no), "{no}");
        }
        let d = candidates(Kind::Date, None, &[]).unwrap();
        for yes in ["2031-10-09", "9 October", "Oct 9th", "9/10", "09-Oct-2031", "9.10.2031"] {
            assert!(finds_any(&d, yes), "{yes}");
        }
        assert!(!finds_any(&d, "19:30") && !finds_any(&d, "Section 9"));
        assert!(candidates(Kind::Text, None, &[]).is_none());
        let town_hall = candidates(Kind::Text, None, &[text("Town Hall")]).unwrap();
        assert!(finds_any(&town_hall, "the town hall"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]
        /// Any date is found in ISO's month-day order without its year, and
        /// no other month-day pair is.
        #[test]
        fn a_month_and_day_without_the_year_is_that_date_only(
            (m, d) in (1u32..=12).prop_flat_map(|m| (Just(m), 1..=days_in(m, 2031))),
            (om, od) in (1u32..=12).prop_flat_map(|m| (Just(m), 1..=days_in(m, 2031))),
            before in "[ |(]{0,2}",
            after in "[ |).,;]{0,2}",
        ) {
            let p = date(Date { year: 2031, month: m, day: d });
            let text = format!("{before}{om:02}-{od:02}{after}");
            proptest::prop_assert_eq!(finds(&p, &text), (m, d) == (om, od), "{}", text);
        }

        /// "May" in a list or span of other months is the month; "may"
        /// before a verb is a hedge.
        #[test]
        fn may_among_months_is_no_hedge(
            months in proptest::collection::vec(proptest::sample::select(&MONTHS[..]), 1..4),
            at in 0usize..4,
            join in proptest::sample::select(&[", ", " and ", " to ", "/", "\u{2013}", ", and ", " or "][..]),
            verb in proptest::sample::select(&["be", "change", "differ", "not"][..]),
        ) {
            let mut list: Vec<&str> = months.into_iter().filter(|m| *m != "May").collect();
            if list.is_empty() {
                list.push("June");
            }
            list.insert(at.min(list.len()), "May");
            let hedge = hedge_words();
            let text = format!("Total: 26.5 hours ({})", list.join(join));
            proptest::prop_assert!(!finds(&hedge, &text), "{}", text);
            let doubted = format!("Total: 26.5 hours, though it may {verb}");
            proptest::prop_assert!(finds(&hedge, &doubted), "{}", doubted);
        }
    }

    #[test]
    fn working_is_an_arithmetic_chain_in_brackets_or_before_equals() {
        let w = working();
        for yes in [
            "(412 + 388 + 295 litres)",
            "= 3.5 + 4.25 + 5.5",
            "(11.42 → 12.07)",
            "(1,200 seeds + 340 seeds)",
            "(412 + 388 + 295)",
            "412 + 388 + 295 = ",
            "(12.07 − 11.42)",
            "19 × 25 =",
            "(3.5+4.25)",
            "(12.07 – 11.42)",
            "(412 plus 388)",
        ] {
            assert!(finds(&w, yes), "{yes}");
        }
        // With words around its numbers, in brackets only.
        for yes in [
            "(2 regulars + 2 stand-ins)",
            "(V 11.42 → V 12.07)",
            "(412 + 388 + 295, the Wren's three October receipts)",
        ] {
            assert!(finds(&w, yes), "{yes}");
        }
        for no in [
            "412 + 388",
            "9-12",
            "(or 1,396)",
            "(24/7)",
            "(9)",
            "2 regulars + 2 stand-ins",
            "(Harl Junction, counted once, plus eight others)",
            "(1,396 with September's receipt)",
            "(twelve with the 4 + 5 of Sundays)",
            "(12 with the 4 + 5 of Sundays)",
        ] {
            assert!(!finds(&w, no), "{no}");
        }
    }
}
