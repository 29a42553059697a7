//! How a value may be spelled in an answer: every rule of spelling lives
//! here, once. Each function turns a value as a maintainer writes it in a
//! check source (`1095`, `26.5`, `07:10`, `2031-02-03`, `Penrose-Adair`)
//! into a JavaScript regular expression (for the `i` flag) that finds it in
//! any usual spelling, and [`candidates`] into one that finds any value of
//! the same kind: what an answer line may not hold besides the right one.
//!
//! - numbers: thousands separated by a comma, a space, a no-break or thin
//!   space (`1,095`, `1 095`), a decimal point or comma (`26.5`, `26,50`),
//!   trailing zeros (`9.00`), words (`nine`, `one thousand and ninety-five`);
//! - times: `07:10`, `7.10`, `7h10`, `0710`, `7:10 am`, `7.10am`, `19:30` as
//!   `7:30 pm`, `noon`, `ten past seven`, `half past seven`;
//! - dates: ISO `2031-02-03`, `3 February 2031`, `3rd of Feb`, `February 3rd,
//!   2031`, `03/02/2031` (day first); a year, when written, must be the right
//!   one;
//! - text: any case, any Unicode hyphen or dash for `-` (U+2010..U+2015,
//!   U+2212), typographic apostrophes and quotes, any run of white space, an
//!   optional full stop after an abbreviation (`Fl.`), an optional space
//!   between a letter and a digit (`FV1`, `FV 1`, `15s`, `15 s`).
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
/// A number starts at no letter, digit or decimal point.
const NUMBER_START: &str = r"(?<![\w.,])";

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

/// A number in any usual spelling (see the module documentation).
pub fn number(n: &Number) -> String {
    let whole = grouped_digits(&n.whole);
    let digits = if n.fraction.is_empty() {
        format!(r"{whole}(?:\.0+)?")
    } else {
        // A decimal comma takes one or two digits: `26,5`, `38,50`; three
        // would read as thousands (`26,500`).
        let comma = match n.fraction.len() {
            1 => format!("|,{}0?", n.fraction),
            2 => format!("|,{}", n.fraction),
            _ => String::new(),
        };
        format!(r"{whole}(?:\.{}0*{comma})", n.fraction)
    };
    let mut out = format!("{NUMBER_START}(?:{digits}{NUMBER_END}");
    if let Some(w) = n.integer().and_then(words) {
        let _ = write!(out, r"|\b{w}\b");
    }
    out.push(')');
    out
}

/// A number of its own, not a part of a date (`12` in `2031-10-12` or
/// `12 October`) or of a time (`10` in `07:10`): for a number stated
/// anywhere in an answer, where dates and times are all around it.
pub fn number_alone(n: &Number) -> String {
    let month = any_month();
    format!(
        r"(?<!{month}\s{{1,3}}|\d{{4}}-(?:\d\d-)?|\d[:h])(?!\d\d?{ORDINAL}(?: of)?\s+{month}|\d\d?[:h]\d\d){}",
        number(n)
    )
}

/// Units after a number (`min`, `kg`): each as written or plural.
pub fn units(units: &[String]) -> String {
    let list: Vec<String> = units.iter().map(|u| format!("{}s?", text_body(u))).collect();
    format!(r"\s*[{DASHES}]?\s*(?:{})(?![a-z])", list.join("|"))
}

/// Any number: digits (a year only when `years`) or a number word other than
/// "one" (a pronoun as often as a number).
///
/// A number that is part of a date (`1 January`, `Oct 9`, `2031-10-09`) or
/// a time (`07:10`) is not a number of its own.
fn any_number(years: bool) -> String {
    let month = any_month();
    // Not a year, nor the day of a date, nor the hour of a time ...
    let year = if years { "" } else { r"(?:19|20)\d\d(?!\d|[.,]\d)|" };
    let not_part = format!(r"(?!{year}\d\d?{ORDINAL}(?: of)?\s+{month}|\d\d?[:h]\d\d|\d{{4}}-)");
    // ... nor what follows a month, an ISO year or an hour.
    let not_after = format!(r"(?<![\w.,]|{month}\s{{1,3}}|\d{{4}}-(?:\d\d-)?|\d[:h])");
    // Every number word but "one": two..nineteen, the tens, hundred, thousand.
    let words = r"(?:(?:twen|thir|for|four|fif|six|seven|eigh|nine)(?:ty|teen)|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|hundred|thousand)";
    format!(r"(?:{not_after}{not_part}\d+(?:{GROUP}\d{{3}})*(?:[.,]\d+)?{NUMBER_END}|\b{words}\b)")
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
const PM: &str = r"\s*(?:pm\b|p\.m\.)";
const AM: &str = r"\s*(?:am\b|a\.m\.)";

/// A time in any usual spelling.
pub fn time(t: Time) -> String {
    let (h, m) = (t.hour, t.minute);
    let mm = format!("{m:02}");
    let mut forms = Vec::new();
    // 24-hour digits: 07:10, 7.10, 7h10, 0710.
    // Digits followed by the other half of the day are another time.
    let other_half = if h < 12 { PM } else { AM };
    if h < 10 {
        forms.push(format!(r"0?{h}[:.h]{mm}(?!\d|{other_half})"));
        forms.push(format!(r"0{h}{mm}(?!\d|{other_half})"));
    } else {
        forms.push(format!(r"{h}[:.h]?{mm}(?!\d|{other_half})"));
    }
    // 12-hour: 7:10 am, 7.30pm, 7 pm.
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let suffix = if h >= 12 { PM } else { AM };
    if m == 0 {
        forms.push(format!(r"{h12}(?:[:.]00)?{suffix}"));
    } else {
        forms.push(format!(r"{h12}[:.]{mm}{suffix}"));
    }
    let mut out = format!(r"(?<![\w:.])(?:{})", forms.join("|"));
    // Words.
    let hour_word = |hour: u32| HOUR_WORDS[(hour % 12) as usize];
    let mut spoken = Vec::new();
    match (h, m) {
        (12, 0) => spoken.push("(?:12 )?(?:noon|midday)".to_string()),
        (0, 0) => spoken.push("midnight".to_string()),
        (_, 0) => spoken.push(format!("{} o['\u{2019}]clock", hour_word(h))),
        _ => {}
    }
    let past = |words: &str| format!("{words} past {}", hour_word(h));
    let to = |words: &str| format!("{words} to {}", hour_word(h + 1));
    match m {
        5 => spoken.push(past("five")),
        10 => spoken.push(past("ten")),
        15 => spoken.push(past("(?:a )?quarter")),
        20 => spoken.push(past("twenty")),
        25 => spoken.push(past(&format!("twenty{}five", word_hyphen()))),
        30 => spoken.push(past("half")),
        35 => spoken.push(to(&format!("twenty{}five", word_hyphen()))),
        40 => spoken.push(to("twenty")),
        45 => spoken.push(to("(?:a )?quarter")),
        50 => spoken.push(to("ten")),
        55 => spoken.push(to("five")),
        _ => {}
    }
    if !spoken.is_empty() {
        let _ = write!(out, r"|\b(?:{})\b", spoken.join("|"));
    }
    format!("(?:{out})")
}

/// Any time of day.
fn any_time() -> String {
    let hours = HOUR_WORDS[1..].join("|");
    format!(
        r"(?:(?<![\w:.])(?:(?:[01]?\d|2[0-3])[:.h][0-5]\d(?!\d)|(?:1[0-2]|0?[1-9])(?:[:.][0-5]\d)?\s*(?:[ap]m\b|[ap]\.m\.))|\b(?:noon|midday|midnight|(?:(?:a )?quarter|half|five|ten|twenty|twenty[{DASHES} ]five) (?:past|to) (?:{hours})|(?:{hours}) o['\u{{2019}}]clock)\b)"
    )
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

/// Any month's name.
/// Any month's name (by its first three letters: short, where a day number
/// beside it already says it is a date).
fn any_month() -> String {
    r"(?:jan|feb|ma[ry]|apr|ju[nl]|aug|sep|oct|nov|dec)[a-z]*\.?".to_string()
}

const ORDINAL: &str = r"(?:st|nd|rd|th)?";

/// A date in any usual spelling; a year, where one follows, must be its
/// year. A bare ordinal day (`the 9th`) counts: a writer who leaves the
/// month out means the one in question.
pub fn date(d: Date) -> String {
    let (y, m, day) = (d.year, d.month, d.day);
    let month = month_name(m);
    // After a day and month: the right year, or none at all.
    let year = format!(r"(?:,?\s+{y}\b|(?!,?\s+\d{{4}}\b|/))");
    let forms = [
        format!(r"{y}-{m:02}-{day:02}\b"),
        format!(r"(?:0?{day}{ORDINAL}(?:\s+of)?\s+{month}|{month}\s+0?{day}{ORDINAL}\b){year}"),
        format!(r"0?{day}/0?{m}(?:/(?:{y}|{yy:02})\b|(?![/\d]))", yy = y % 100),
        // A bare ordinal ("on the 9th") where the month goes without saying;
        // one followed by a month is that month's.
        format!(r"0?{day}(?:st|nd|rd|th)\b(?!(?:\s+of)?\s+{any})", any = any_month()),
    ];
    format!(r"(?<![\w/-])(?:{})", forms.join("|"))
}

/// Any date.
fn any_date() -> String {
    let month = any_month();
    format!(
        r"(?<![\w/-])(?:\d{{4}}-\d{{2}}-\d{{2}}\b|\d{{1,2}}{ORDINAL}(?:\s+of)?\s+{month}|{month}\s+\d{{1,2}}{ORDINAL}\b|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b|\d{{1,2}}(?:st|nd|rd|th)\b)"
    )
}

// ---------------------------------------------------------------- text

/// The inside of a text pattern, without boundaries.
fn text_body(value: &str) -> String {
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
                || prev.zip(after).is_some_and(|(p, a)| p.is_alphabetic() != a.is_alphabetic());
            out.push_str(if optional { r"\s*" } else { r"\s+" });
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
        } else {
            // Between a letter and a digit (FV1, 15s) a space may come.
            if let Some(p) = prev
                && p.is_alphanumeric()
                && c.is_alphanumeric()
                && p.is_alphabetic() != c.is_alphabetic()
            {
                out.push_str(" ?");
            }
            out.push_str(&escape(&c.to_string()));
            // An abbreviation may take a full stop the value does not write: `Fl.(2) W.`
            if c.is_alphabetic() && chars.get(i + 1).is_some_and(|n| n.is_whitespace() || "()[]/".contains(*n)) {
                out.push_str(r"\.?");
            }
        }
        i += 1;
    }
    out
}

/// A text in any case, dash, apostrophe and spacing (see the module documentation).
pub fn text(value: &str) -> String {
    let body = text_body(value);
    let trimmed = value.trim();
    let start = if trimmed.starts_with(|c: char| c.is_alphanumeric()) { r"(?<![\w])" } else { "" };
    let end = if trimmed.ends_with(|c: char| c.is_alphanumeric()) { r"(?![\w])" } else { "" };
    format!("{start}{body}{end}")
}

/// Any of several spellings of a text.
pub fn any_text(values: &[String]) -> String {
    match values {
        [one] => text(one),
        _ => format!("(?:{})", values.iter().map(|v| text(v)).collect::<Vec<_>>().join("|")),
    }
}

// ---------------------------------------------------------------- candidates

/// Any value of `kind` (for text, any of `others`); `None` when nothing of
/// the kind can be recognised. A number line does not count years as numbers
/// unless `years`; with `units` only numbers followed by one of them count.
pub fn candidates(kind: Kind, years: bool, unit: Option<&str>, others: &[String]) -> Option<String> {
    match kind {
        Kind::Number => Some(match unit {
            Some(u) => format!("{}{u}", any_number(years)),
            None => any_number(years),
        }),
        Kind::Time => Some(any_time()),
        Kind::Date => Some(any_date()),
        Kind::Text if others.is_empty() => None,
        Kind::Text => Some(any_text(others)),
    }
}

/// Whether a number line should count years among its values.
pub fn counts_years(expected: &[Number]) -> bool {
    expected.iter().any(Number::is_year)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Does `pattern` (flag i) find a match in `text`?
    fn finds(pattern: &str, text: &str) -> bool {
        let re = regress::Regex::with_flags(pattern, "i").unwrap_or_else(|e| panic!("{pattern}: {e}"));
        re.find(text).is_some()
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
        for yes in ["26.5 hours", "26.50", "26,5", "26,50 h"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["26", "26.55", "26,500", "126.5", "26.51"] {
            assert!(!finds(&p, no), "{no}");
        }
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
        assert_eq!(Number::parse("1,095").unwrap().display(), "1095");
        assert_eq!(Number::parse("12095").unwrap().display(), "12,095");
        let alone = number_alone(&Number::parse("12").unwrap());
        assert!(
            finds(&alone, "12 boxes")
                && !finds(&alone, "2031-10-12")
                && !finds(&alone, "12 October")
                && !finds(&alone, "10:12")
        );
        assert!(Number::parse("12a").is_err() && Number::parse("").is_err() && Number::parse("1.2.3").is_err());
    }

    #[test]
    fn times_in_every_usual_spelling() {
        let p = time(Time::parse("07:10").unwrap());
        for yes in ["07:10", "7:10", "7.10", "7h10", "0710", "7:10 am", "7.10am", "7:10 a.m.", "ten past seven"] {
            assert!(finds(&p, yes), "{yes}");
        }
        for no in ["17:10", "07:100", "7:10 pm", "ten past eight", "1:07:10"] {
            assert!(!finds(&p, no), "{no}");
        }
        let p = time(Time::parse("19:30").unwrap());
        for yes in ["19:30", "1930", "7:30 pm", "7.30pm", "half past seven"] {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(!finds(&p, "7:30 am"));
        let p = time(Time::parse("12:00").unwrap());
        for yes in ["12:00", "noon", "midday", "12 noon", "12 pm", "12pm"] {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(finds(&time(Time::parse("14:00").unwrap()), "2 pm"));
        assert!(finds(&time(Time::parse("14:00").unwrap()), "two o’clock"));
        assert!(Time::parse("24:00").is_err() && Time::parse("7:5").is_err() && Time::parse("seven").is_err());
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
            "3rd March",
            "the 13th",
        ] {
            assert!(!finds(&p, no), "{no}");
        }
        let p = date(Date::parse("2031-09-06").unwrap());
        assert!(finds(&p, "6 Sept") && finds(&p, "Sep 6th") && finds(&p, "6th of September"));
        assert!(finds(&date(Date::parse("2031-05-11").unwrap()), "11 May"));
        assert!(Date::parse("2031-02-30").is_err() && Date::parse("3 Feb").is_err());
        assert_eq!(Date::parse("2031-10-09").unwrap().display(), "9 October 2031");
    }

    #[test]
    fn text_in_any_case_dash_quote_and_space() {
        let p = text("Jago Penrose-Adair");
        for yes in ["jago penrose-adair", "Jago Penrose\u{2011}Adair", "Jago  Penrose Adair", "**Jago Penrose–Adair**"]
        {
            assert!(finds(&p, yes), "{yes}");
        }
        assert!(!finds(&p, "Jago Penrose-Adairs"));
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
    }

    #[test]
    fn candidates_find_values_of_the_kind() {
        let n = candidates(Kind::Number, false, None, &[]).unwrap();
        for yes in ["9", "1,396", "26.5", "twelve", "Twenty"] {
            assert!(finds(&n, yes), "{yes}");
        }
        for no in ["2032", "T31", "one", "the Playhouse", "1 January", "Oct 9th", "2031-10-09", "07:10", "7h10"] {
            assert!(!finds(&n, no), "{no}");
        }
        assert!(finds(&n, "9-12") && finds(&n, "from 1 to 9 January"));
        assert!(finds(&candidates(Kind::Number, true, None, &[]).unwrap(), "2032"));
        let with_unit =
            candidates(Kind::Number, false, Some(&units(&["M".into(), "nautical mile".into()])), &[]).unwrap();
        assert!(
            finds(&with_unit, "18 M") && finds(&with_unit, "16 nautical miles") && !finds(&with_unit, "Fl(2) W 15s")
        );
        let t = candidates(Kind::Time, false, None, &[]).unwrap();
        for yes in ["06:50", "5.40", "7 pm", "noon", "ten to seven", "eight o'clock"] {
            assert!(finds(&t, yes), "{yes}");
        }
        assert!(!finds(&t, "35 minutes") && !finds(&t, "26.5"));
        let d = candidates(Kind::Date, false, None, &[]).unwrap();
        for yes in ["2031-10-09", "9 October", "Oct 9th", "9/10"] {
            assert!(finds(&d, yes), "{yes}");
        }
        assert!(!finds(&d, "19:30") && !finds(&d, "Section 9"));
        assert!(candidates(Kind::Text, false, None, &[]).is_none());
        assert!(finds(&candidates(Kind::Text, false, None, &["Town Hall".into()]).unwrap(), "the town hall"));
    }
}
