//! Prototype port of `detectors/pii.py`'s per-event work (ragpulse) to Rust.
//!
//! Same candidate patterns (the `regex` crate: leftmost-first, linear time like RE2),
//! same validation (Luhn, ISO 13616 mod-97, SSN ranges, phone digit counts, the
//! "isolated" neighbour test, e-mail ssh/URL exclusions), same budgets (MAX_PER_PATTERN,
//! MAX_CANDIDATES, MAX_CONTEXT_CANDIDATES, MAX_HITS), same priority/overlap resolution and
//! the same `ignore_if_in_context` normalised-key filter over the event's other texts.
//!
//! Offsets: the patterns only match ASCII, so the work runs on the UTF-8 bytes; spans are
//! turned into character offsets (what Python reports) at the end. The neighbour test
//! uses Python's own `str.isalnum` / `str.isdigit` for a non-ASCII neighbour (rare), so
//! Unicode letters and digits count exactly as in the Python detector.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use regex::bytes::{Regex, RegexSet, RegexSetBuilder};

const MAX_HITS: usize = 32;
const MAX_PER_PATTERN: i64 = 300;
const MAX_CANDIDATES: i64 = 1000;
const MAX_CONTEXT_CANDIDATES: i64 = 2000;

const CATEGORIES: [&str; 5] = ["email", "phone", "payment_card", "iban", "us_ssn"];
const EMAIL: u8 = 0;
const PHONE: u8 = 1;
const CARD: u8 = 2;
const IBAN: u8 = 3;
const SSN: u8 = 4;

/// pii.py's _PRIORITY: iban, payment_card, us_ssn, phone, email
fn priority(cat: u8) -> u8 {
    match cat {
        IBAN => 0,
        CARD => 1,
        SSN => 2,
        PHONE => 3,
        _ => 4,
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Iban,
    Card,
    Ssn,
    Phone(usize, usize),
    Email,
}

/// pii.py's _RULES, in declaration order. `(?-u)`: ASCII classes and an ASCII `\b`, as
/// in RE2 (the `regex` crate's `\b` is Unicode-aware by default); otherwise verbatim.
const RULES: [(u8, Kind, &str); 7] = [
    (IBAN, Kind::Iban, r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}"),
    (CARD, Kind::Card, r"\b[2-6](?:[ -]?[0-9]){12,18}\b"),
    (SSN, Kind::Ssn, r"\b[0-9]{3}-[0-9]{2}-[0-9]{4}\b"),
    (PHONE, Kind::Phone(8, 15), r"\+[1-9](?:[ .()-]{0,2}[0-9]){7,14}"),
    (
        PHONE,
        Kind::Phone(10, 11),
        r"(?:\b1[ .-]?)?(?:\([2-9][0-9]{2}\) ?|\b[2-9][0-9]{2}[ .-])[0-9]{3}[ .-][0-9]{4}\b",
    ),
    (
        PHONE,
        Kind::Phone(9, 15),
        r"(?:\(0[0-9]{1,4}\) ?|\b0[0-9]{1,4}[ /.-])[0-9]{2,4}(?:[ /.-][0-9]{2,4}){1,4}\b",
    ),
    (
        EMAIL,
        Kind::Email,
        r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b",
    ),
];

const IBAN_LENGTHS: [(&[u8; 2], usize); 69] = [
    (b"AD", 24), (b"AE", 23), (b"AL", 28), (b"AT", 20), (b"AZ", 28), (b"BA", 20), (b"BE", 16),
    (b"BG", 22), (b"BH", 22), (b"BR", 29), (b"CH", 21), (b"CR", 22), (b"CY", 28), (b"CZ", 24),
    (b"DE", 22), (b"DK", 18), (b"DO", 28), (b"EE", 20), (b"EG", 29), (b"ES", 24), (b"FI", 18),
    (b"FO", 18), (b"FR", 27), (b"GB", 22), (b"GE", 22), (b"GI", 23), (b"GL", 18), (b"GR", 27),
    (b"GT", 28), (b"HR", 21), (b"HU", 28), (b"IE", 22), (b"IL", 23), (b"IS", 26), (b"IT", 27),
    (b"JO", 30), (b"KW", 30), (b"KZ", 20), (b"LB", 28), (b"LI", 21), (b"LT", 20), (b"LU", 20),
    (b"LV", 21), (b"MC", 27), (b"MD", 24), (b"ME", 22), (b"MK", 19), (b"MR", 27), (b"MT", 31),
    (b"MU", 30), (b"NL", 18), (b"NO", 15), (b"PK", 24), (b"PL", 28), (b"PS", 29), (b"PT", 25),
    (b"QA", 29), (b"RO", 24), (b"RS", 22), (b"SA", 24), (b"SE", 24), (b"SI", 19), (b"SK", 24),
    (b"SM", 27), (b"TN", 24), (b"TR", 26), (b"UA", 29), (b"VG", 24), (b"XK", 20),
];

fn iban_length(cc: &[u8]) -> Option<usize> {
    IBAN_LENGTHS.iter().find(|(c, _)| &c[..] == cc).map(|(_, n)| *n)
}

/// A validated candidate: byte offsets into the text, the normalised key.
struct Hit {
    cat: u8,
    start: usize,
    end: usize,
    key: String,
}

struct Rule {
    cat: u8,
    kind: Kind,
    re: Regex,
}

fn luhn_ok(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut v = (d - b'0') as u32;
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    sum % 10 == 0
}

/// ISO 13616: the IBAN with its first four characters moved to the end, letters as
/// 10..35, is 1 modulo 97 (computed digit by digit instead of as a big integer).
fn mod97_ok(iban: &[u8]) -> bool {
    let mut r: u32 = 0;
    for &c in iban[4..].iter().chain(iban[..4].iter()) {
        if c.is_ascii_digit() {
            r = (r * 10 + (c - b'0') as u32) % 97;
        } else {
            r = (r * 100 + (c - b'A') as u32 + 10) % 97;
        }
    }
    r == 1
}

/// pii.py's _NOT_DIGITS: the candidate patterns allow only these separators
fn digits_of(value: &[u8]) -> Vec<u8> {
    value
        .iter()
        .copied()
        .filter(|c| !matches!(c, b' ' | b'.' | b'-' | b'/' | b'(' | b')' | b'+'))
        .collect()
}

fn py_char_test(py: Python<'_>, c: char, method: &str) -> bool {
    let mut buf = [0u8; 4];
    let s = PyString::new(py, c.encode_utf8(&mut buf));
    s.call_method0(method)
        .and_then(|r| r.is_true())
        .unwrap_or(false)
}

/// Python's str.isalnum() of one character (ASCII fast path, else Python's own answer)
fn is_alnum(py: Python<'_>, c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        py_char_test(py, c, "isalnum")
    }
}

/// Python's str.isdigit() of one character
fn is_digit(py: Python<'_>, c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_digit()
    } else {
        py_char_test(py, c, "isdigit")
    }
}

fn prev_char(text: &str, pos: usize) -> (char, usize) {
    let c = text[..pos].chars().next_back().unwrap();
    (c, c.len_utf8())
}

fn next_char(text: &str, pos: usize) -> (char, usize) {
    let c = text[pos..].chars().next().unwrap();
    (c, c.len_utf8())
}

/// pii.py's _isolated, on byte offsets (the span's ends are character boundaries).
fn isolated(py: Python<'_>, text: &str, start: usize, end: usize) -> bool {
    let b = text.as_bytes();
    let spaced = b[start..end].contains(&b' ');
    let is_sep = |c: char| matches!(c, '-' | '.' | '/') || (spaced && c == ' ');
    if start > 0 {
        let (before, n) = prev_char(text, start);
        if matches!(before, '+' | '@' | '_') || is_alnum(py, before) {
            return false;
        }
        if is_sep(before) && start - n > 0 && is_digit(py, prev_char(text, start - n).0) {
            return false;
        }
    }
    if end < b.len() {
        let (after, n) = next_char(text, end);
        if matches!(after, '@' | '_') || is_alnum(py, after) {
            return false;
        }
        if is_sep(after) && end + n < b.len() && is_digit(py, next_char(text, end + n).0) {
            return false;
        }
    }
    true
}

fn check(py: Python<'_>, kind: Kind, text: &str, start: usize, end: usize) -> Option<Hit> {
    let b = text.as_bytes();
    let value = &b[start..end];
    match kind {
        Kind::Email => {
            if b[end..].starts_with(b":") || (start >= 3 && &b[start - 3..start] == b"://") {
                return None; // git@host:org/repo ssh remote, URL userinfo
            }
            let key = text[start..end].to_ascii_lowercase();
            Some(Hit { cat: EMAIL, start, end, key })
        }
        Kind::Card => {
            if value.contains(&b' ') && value.contains(&b'-') {
                return None;
            }
            let digits = digits_of(value);
            if !luhn_ok(&digits) || !isolated(py, text, start, end) {
                return None;
            }
            Some(Hit { cat: CARD, start, end, key: String::from_utf8(digits).unwrap() })
        }
        Kind::Ssn => {
            // AAA-GG-SSSS (the pattern's shape)
            let (area, group, serial) = (&value[0..3], &value[4..6], &value[7..11]);
            if area == b"000" || area == b"666" || area[0] == b'9' || group == b"00" || serial == b"0000"
            {
                return None;
            }
            if !isolated(py, text, start, end) {
                return None;
            }
            let mut key = String::with_capacity(9);
            for part in [area, group, serial] {
                key.push_str(std::str::from_utf8(part).unwrap());
            }
            Some(Hit { cat: SSN, start, end, key })
        }
        Kind::Iban => {
            let length = iban_length(&value[..2])?;
            let compact: Vec<u8> = value.iter().copied().filter(|&c| c != b' ').collect();
            if compact.len() < length || !mod97_ok(&compact[..length]) {
                return None;
            }
            let mut end = end;
            if compact.len() > length {
                // the pattern ran on into the next word: cut the span
                let mut taken = 0;
                for (offset, &ch) in value.iter().enumerate() {
                    taken += (ch != b' ') as usize;
                    if taken == length {
                        end = start + offset + 1;
                        break;
                    }
                }
            }
            if !isolated(py, text, start, end) {
                return None;
            }
            let key = String::from_utf8(compact[..length].to_vec()).unwrap();
            Some(Hit { cat: IBAN, start, end, key })
        }
        Kind::Phone(low, high) => {
            let digits = digits_of(value);
            if digits.len() < low || digits.len() > high || !isolated(py, text, start, end) {
                return None;
            }
            if value.len() == 11 && value[3] == b'-' && value[6] == b'-' {
                return None; // AAA-GG-SSSS is SSN-shaped
            }
            let key = String::from_utf8(digits[digits.len().saturating_sub(9)..].to_vec()).unwrap();
            Some(Hit { cat: PHONE, start, end, key })
        }
    }
}

/// The masked evidence, from the key (and the span for e-mail), as pii.py builds it.
fn evidence(text: &str, h: &Hit) -> String {
    let k = &h.key;
    let last4 = &k[k.len().saturating_sub(4)..];
    match h.cat {
        EMAIL => {
            let value = &text[h.start..h.end];
            let at = value.find('@').unwrap();
            format!("{}***@{}", &value[..1], &value[at + 1..])
        }
        CARD => format!("card ending {}", last4),
        SSN => format!("SSN ***-**-{}", last4),
        IBAN => format!("IBAN {}** ending {}", &k[..2], last4),
        _ => format!("phone ending {}", last4),
    }
}

fn text_of(obj: &PyAny) -> PyResult<&str> {
    obj.downcast::<PyString>()?.to_str()
}

enum Screen {
    Counts,
    /// the set, and how many texts it screened since its cache was last renewed
    Set(RefCell<RegexSet>, Cell<u32>),
    None,
}

/// What one byte pass over a text tells about which rules can match at all.
struct Counts {
    digits: usize,
    at: bool,
    plus: bool,
}

impl Counts {
    fn of(bytes: &[u8]) -> Counts {
        let mut c = Counts { digits: 0, at: false, plus: false };
        for &b in bytes {
            c.digits += b.is_ascii_digit() as usize;
            c.at |= b == b'@';
            c.plus |= b == b'+';
        }
        c
    }

    /// A necessary condition for the rule's pattern to match somewhere in the text.
    fn may_match(&self, kind: Kind) -> bool {
        match kind {
            Kind::Email => self.at,                      // ...@...
            Kind::Iban => self.digits >= 2,              // [A-Z]{2}[0-9]{2}...
            Kind::Card => self.digits >= 13,             // [2-6](?:[ -]?[0-9]){12,18}
            Kind::Ssn => self.digits >= 9,               // [0-9]{3}-[0-9]{2}-[0-9]{4}
            Kind::Phone(8, _) => self.plus && self.digits >= 8, // \+[1-9](...[0-9]){7,14}
            Kind::Phone(10, _) => self.digits >= 10,     // nanp: 3 + 3 + 4
            Kind::Phone(..) => self.digits >= 6,         // national: 0 + 1 + 2 + 2
        }
    }
}

#[pyclass(module = "ragpulse_pii")]
struct Pii {
    rules: Vec<Rule>,
    /// How a text is screened before the rules' own searches (`screen=`):
    /// * "set" (default): one RegexSet pass (RE2's Set in scan.py), then the matching
    ///   rules only (defaults: 64 MiB cache, renewed every 10,000 texts).
    ///   Its lazy-DFA cache limit is `set_dfa_size_limit`. regex 1.7 abandons a lazy DFA
    ///   for good once its cache has been flushed 3 times (the flush counter lives in
    ///   the cache and is never reset): after enough hostile or varied text every later
    ///   search on that set takes the slow engine, ~10-15x slower (see README). With
    ///   `set_reset_every` = N > 0 the set is cloned every N texts: a clone shares the
    ///   compiled program and starts a fresh cache (regex 1.7's `Exec::clone`);
    /// * "counts": one byte pass counts digits and notes '@' and '+'; a rule runs only
    ///   when the text meets its necessary condition (a card needs 13 digits, an SSN 9,
    ///   an e-mail an '@', ...), so skipping never changes an answer;
    /// * "none": every rule searches every text.
    screen: Screen,
    set_reset_every: u32,
    categories: u8, // bit mask of CATEGORIES indices
    ignore_if_in_context: bool,
    names: Vec<Py<PyString>>,
}

impl Pii {
    /// pii.py's _candidates: validated findings of the `wanted` categories, overlaps kept.
    fn candidates(
        &self,
        py: Python<'_>,
        text: &str,
        wanted: u8,
        budget: &mut i64,
        out: &mut Vec<Hit>,
    ) {
        let bytes = text.as_bytes();
        let matched = match &self.screen {
            Screen::Set(set, uses) => {
                if self.set_reset_every > 0 {
                    if uses.get() >= self.set_reset_every {
                        let fresh = set.borrow().clone();
                        *set.borrow_mut() = fresh;
                        uses.set(0);
                    }
                    uses.set(uses.get() + 1);
                }
                let m = set.borrow().matches(bytes);
                Some(m)
            }
            _ => None,
        };
        let counts = match &self.screen {
            Screen::Counts => Some(Counts::of(bytes)),
            _ => None,
        };
        for (i, rule) in self.rules.iter().enumerate() {
            if wanted & (1 << rule.cat) == 0 {
                continue;
            }
            if let Some(m) = &matched {
                if !m.matched(i) {
                    continue;
                }
            }
            if let Some(c) = &counts {
                if !c.may_match(rule.kind) {
                    continue;
                }
            }
            let limit = MAX_PER_PATTERN.min(*budget) as usize;
            for m in rule.re.find_iter(bytes).take(limit) {
                *budget -= 1;
                if let Some(hit) = check(py, rule.kind, text, m.start(), m.end()) {
                    out.push(hit);
                }
            }
            if *budget <= 0 {
                break;
            }
        }
    }

    /// pii.py's find: validated, non-overlapping findings, by position (byte offsets).
    fn find_hits(&self, py: Python<'_>, text: &str) -> Vec<Hit> {
        let mut found = Vec::new();
        let mut budget = MAX_CANDIDATES;
        if !text.is_empty() {
            self.candidates(py, text, self.categories, &mut budget, &mut found);
        }
        found.sort_by_key(|h| (priority(h.cat), h.start)); // stable, as Python's sort
        let mut kept: Vec<Hit> = Vec::new();
        for hit in found {
            let i = kept.partition_point(|k| k.start <= hit.start); // bisect_right
            if (i > 0 && kept[i - 1].end > hit.start) || (i < kept.len() && kept[i].start < hit.end) {
                continue;
            }
            kept.insert(i, hit);
        }
        kept
    }

    /// pii.py's _context_keys: normalised values in the turn's inputs (query, history,
    /// case fields, retrieved chunks, citations), read in order until every needed
    /// value is among them or the budget is spent.
    fn context_keys(
        &self,
        py: Python<'_>,
        event: &PyAny,
        needed: &HashSet<(u8, &str)>,
    ) -> PyResult<HashSet<(u8, String)>> {
        let wanted = needed.iter().fold(0u8, |m, (c, _)| m | (1 << c));
        let mut keys: HashSet<(u8, String)> = HashSet::new();
        let mut budget = MAX_CONTEXT_CANDIDATES;
        let mut found: Vec<Hit> = Vec::new();
        // returns true when done (every needed value seen, or the budget spent)
        let mut visit = |obj: &PyAny, keys: &mut HashSet<(u8, String)>| -> bool {
            if budget <= 0 {
                return true;
            }
            let text = match obj.downcast::<PyString>() {
                Ok(s) => match s.to_str() {
                    Ok(t) => t,
                    Err(_) => return false,
                },
                Err(_) => return false, // not a str (a metadata value): skipped
            };
            if text.is_empty() {
                return false;
            }
            found.clear();
            self.candidates(py, text, wanted, &mut budget, &mut found);
            for h in found.drain(..) {
                keys.insert((h.cat, h.key));
            }
            let done = !keys.is_empty()
                && needed.iter().all(|(c, k)| keys.contains(&(*c, (*k).to_string())));
            done || budget <= 0
        };
        // `found and needed <= keys` in Python: checked only after a text with findings;
        // `visit` checks it after every text, which is the same answer (keys only grow).
        if visit(event.getattr("query")?, &mut keys) {
            return Ok(keys);
        }
        for m in event.getattr("history")?.iter()? {
            if visit(m?.getattr("content")?, &mut keys) {
                return Ok(keys);
            }
        }
        let case = event.getattr("case")?;
        if !case.is_none() {
            if visit(case.getattr("subject")?, &mut keys) || visit(case.getattr("description")?, &mut keys) {
                return Ok(keys);
            }
            let metadata = case.getattr("metadata")?;
            if metadata.is_true()? {
                let md: &PyDict = metadata.downcast()?;
                for v in md.values() {
                    if visit(v, &mut keys) {
                        return Ok(keys);
                    }
                }
            }
        }
        for c in event.getattr("retrieved_context")?.iter()? {
            if visit(c?.getattr("content")?, &mut keys) {
                return Ok(keys);
            }
        }
        for c in event.getattr("citations")?.iter()? {
            if visit(c?.getattr("text")?, &mut keys) {
                return Ok(keys);
            }
        }
        Ok(keys)
    }
}

/// Character offset of byte offset `pos` (a character boundary) in `text`.
fn char_offset(text: &str, ascii: bool, pos: usize) -> usize {
    if ascii {
        pos
    } else {
        text.as_bytes()[..pos].iter().filter(|&&b| (b & 0xC0) != 0x80).count()
    }
}

#[pymethods]
impl Pii {
    #[new]
    #[args(
        categories = "None",
        ignore_if_in_context = "true",
        screen = "\"set\"",
        set_dfa_size_limit = "67108864",
        set_reset_every = "10000"
    )]
    fn new(
        py: Python<'_>,
        categories: Option<Vec<String>>,
        ignore_if_in_context: bool,
        screen: &str,
        set_dfa_size_limit: usize,
        set_reset_every: u32,
    ) -> PyResult<Self> {
        let mut mask = 0u8;
        match categories {
            None => mask = 0b11111,
            Some(list) => {
                for c in list {
                    match CATEGORIES.iter().position(|k| *k == c) {
                        Some(i) => mask |= 1 << i,
                        None => {
                            return Err(PyValueError::new_err(format!(
                                "unknown pii category {c:?}; available: {CATEGORIES:?}"
                            )))
                        }
                    }
                }
            }
        }
        let mut rules = Vec::new();
        let mut sources = Vec::new();
        for (cat, kind, rx) in RULES {
            if mask & (1 << cat) == 0 {
                continue;
            }
            let source = format!("(?-u){rx}");
            let re = Regex::new(&source).map_err(|e| PyValueError::new_err(e.to_string()))?;
            rules.push(Rule { cat, kind, re });
            sources.push(source);
        }
        let screen = match screen {
            "counts" => Screen::Counts,
            "none" => Screen::None,
            "set" => Screen::Set(
                RefCell::new(
                    RegexSetBuilder::new(&sources)
                        .dfa_size_limit(set_dfa_size_limit)
                        .build()
                        .map_err(|e| PyValueError::new_err(e.to_string()))?,
                ),
                Cell::new(0),
            ),
            other => {
                return Err(PyValueError::new_err(format!(
                    "screen must be 'counts', 'set' or 'none', not {other:?}"
                )))
            }
        };
        let names = CATEGORIES.iter().map(|c| PyString::intern(py, c).into()).collect();
        Ok(Pii { rules, screen, set_reset_every, categories: mask, ignore_if_in_context, names })
    }

    /// `PiiDetector.find(text)`: [(category, start, end, key, evidence)], character offsets.
    fn find(&self, py: Python<'_>, text: &str) -> Vec<(Py<PyString>, usize, usize, String, String)> {
        let ascii = text.is_ascii();
        self.find_hits(py, text)
            .iter()
            .map(|h| {
                (
                    self.names[h.cat as usize].clone_ref(py),
                    char_offset(text, ascii, h.start),
                    char_offset(text, ascii, h.end),
                    h.key.clone(),
                    evidence(text, h),
                )
            })
            .collect()
    }

    /// The detector's per-event work: [(category, evidence, start, end)] for `event`
    /// (reads event.response, and the other texts only when ignore_if_in_context needs them).
    fn detect(&self, py: Python<'_>, event: &PyAny) -> PyResult<Vec<(Py<PyString>, String, usize, usize)>> {
        let response = event.getattr("response")?;
        let text = text_of(response)?;
        let mut hits = self.find_hits(py, text);
        if hits.is_empty() {
            return Ok(Vec::new());
        }
        if self.ignore_if_in_context {
            let known = {
                let needed: HashSet<(u8, &str)> = hits.iter().map(|h| (h.cat, h.key.as_str())).collect();
                self.context_keys(py, event, &needed)?
            };
            hits.retain(|h| !known.contains(&(h.cat, h.key.clone())));
        }
        let ascii = text.is_ascii();
        Ok(hits
            .iter()
            .take(MAX_HITS)
            .map(|h| {
                (
                    self.names[h.cat as usize].clone_ref(py),
                    evidence(text, h),
                    char_offset(text, ascii, h.start),
                    char_offset(text, ascii, h.end),
                )
            })
            .collect())
    }

    #[getter]
    fn categories(&self) -> Vec<&'static str> {
        CATEGORIES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.categories & (1 << i) != 0)
            .map(|(_, c)| *c)
            .collect()
    }
}

/// For the full-port survey (patterns_check.py): compile one pattern with the `regex`
/// crate (bytes API, Unicode mode on): (ok, error text, seconds). `size_limit`: the
/// compiled program's cap (the crate's default is 10 MiB).
#[pyfunction]
fn compile_check(pattern: &str, size_limit: usize) -> (bool, String, f64) {
    let t = std::time::Instant::now();
    let got = regex::bytes::RegexBuilder::new(pattern).size_limit(size_limit).build();
    let secs = t.elapsed().as_secs_f64();
    match got {
        Ok(_) => (true, String::new(), secs),
        Err(e) => (false, e.to_string(), secs),
    }
}

/// Match spans (byte offsets into the UTF-8 text) of `pattern` in each text, at most
/// `limit` per text: for comparing translated patterns with RE2's own spans.
#[pyfunction]
fn find_spans(pattern: &str, texts: Vec<&str>, limit: usize) -> PyResult<Vec<Vec<(usize, usize)>>> {
    let re = regex::bytes::RegexBuilder::new(pattern)
        .size_limit(256 << 20)
        .dfa_size_limit(64 << 20)
        .build()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(texts
        .iter()
        .map(|t| re.find_iter(t.as_bytes()).take(limit).map(|m| (m.start(), m.end())).collect())
        .collect())
}

/// The same for a RegexSet of `patterns` (one per text field in scan.py).
#[pyfunction]
fn set_check(patterns: Vec<String>, size_limit: usize) -> (bool, String, f64) {
    let t = std::time::Instant::now();
    let got = regex::bytes::RegexSetBuilder::new(&patterns).size_limit(size_limit).build();
    let secs = t.elapsed().as_secs_f64();
    match got {
        Ok(_) => (true, String::new(), secs),
        Err(e) => (false, e.to_string(), secs),
    }
}

#[pymodule]
fn ragpulse_pii(_py: Python<'_>, m: &PyModule) -> PyResult<()> {
    m.add_class::<Pii>()?;
    m.add_function(wrap_pyfunction!(compile_check, m)?)?;
    m.add_function(wrap_pyfunction!(set_check, m)?)?;
    m.add_function(wrap_pyfunction!(find_spans, m)?)?;
    Ok(())
}
