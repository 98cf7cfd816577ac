//! Prototype: the per-event work of `detectors/source_policy.py` (`SourcePolicyDetector.__call__`)
//! in Rust, for measurement only.
//!
//! Ported: the policy filter of the chunks, `lexical.words` / `word_span` / `blank_quoted`,
//! the n-gram overlap check (`_check`, with `_Side` / `_ChunkGrams` replaced by word ids and
//! slice sets: same answers, see below), `_blank_verbatim_single_quotes` (its RE2 pattern
//! `_SINGLE_QUOTED` is matched by hand, linear, leftmost-first like RE2), `_reported_clauses`
//! (`_ATTRIBUTION` with the `regex` crate, ASCII bytes, case-insensitive) and `_reported`,
//! the limits (`MAX_QUOTES`, `MAX_CUES`, 600-character windows) and the evidence strings.
//!
//! Python semantics kept:
//! * character offsets everywhere (Rust works on UTF-8; spans are counted in chars);
//! * `str.split()` whitespace: Rust's `char::is_whitespace` plus U+001C..U+001F;
//! * `str.lower()`: `char::to_lowercase` per character, except for text holding U+03A3
//!   (final sigma is contextual) or one of the 55 code points whose lowercase differs
//!   between Rust's Unicode tables and Python 3.11's (Unicode 14): such text is lowered by
//!   calling Python's own `str.lower` (rare, exact);
//! * `str.isdigit()` on short non-ASCII words (the `_content` filter): Python's own method.
//!
//! N-gram sets: `" ".join` keys of words that hold no whitespace are equal exactly when the
//! word sequences are, so a set of n-gram strings is replaced by a set of `&[u32]` windows
//! of word ids (ids of the side's words; a chunk word not on the side can be in no shared
//! n-gram). `_ChunkGrams`' runs, `_Side.shares`' substring probes and `shared_long`'s flag
//! test are shortcuts whose answers are those of the plain set algebra done here (the flag
//! test is kept, as the same cheap shortcut).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use regex::bytes::{Regex as BRegex, RegexBuilder as BRegexBuilder};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};

// ----------------------------------------------------------------------------- hashing

/// FxHash (rustc's hasher): much cheaper than SipHash for short keys; no DoS concern here
/// beyond what Python's own str hash has (the sets are per event and bounded by the limits).
#[derive(Default, Clone, Copy)]
struct Fx(u64);
const FX_K: u64 = 0x517c_c1b7_2722_0a95;
impl Fx {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(FX_K);
    }
}
impl Hasher for Fx {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut it = bytes.chunks_exact(8);
        for c in &mut it {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = it.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64)
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64)
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i)
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64)
    }
}
type FxBuild = BuildHasherDefault<Fx>;
type FxSet<T> = HashSet<T, FxBuild>;

// ----------------------------------------------------------------------------- Python text semantics

const BARRIER: char = '\u{e000}';
const MAX_CUES: usize = 50;
const MAX_QUOTES: usize = 200;

/// `lexical._UNI_PUNCT`
const UNI_PUNCT: [char; 21] = [
    '\u{2018}', '\u{2019}', '\u{201a}', '\u{201b}', '\u{201c}', '\u{201d}', '\u{201e}', '\u{ab}',
    '\u{bb}', '\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2026}',
    '\u{b7}', '\u{2022}', '\u{a1}', '\u{bf}', '\u{a0}',
];

/// `str.isspace()` (what `str.split()` / `str.lstrip()` split on / strip).
#[inline]
fn is_py_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(c, '\t' | '\n' | '\x0b' | '\x0c' | '\r' | '\x1c'..='\x1f' | ' ')
    } else {
        c.is_whitespace()
    }
}


/// Code points whose lowercase Rust and Python 3.11 disagree on (Rust's tables are newer
/// than Unicode 14), and capital sigma (contextual in `str.lower`).
#[inline]
fn lower_needs_python(c: char) -> bool {
    matches!(c as u32, 0x03a3 | 0x1c89 | 0xa7cb..=0xa7dc | 0x10d50..=0x10d65 | 0x16ea0..=0x16eb8)
}

/// `lexical.words(text)`, with each word's character span in `text` (what `word_span`
/// computes). `buf` is `" ".join(words)`.
struct Words {
    buf: String,
    ranges: Vec<(u32, u32)>,  // byte ranges in buf
    cspans: Vec<(u32, u32)>, // char spans in the text
    nchars: usize,
    hashes: Vec<u64>, // of each word's bytes (`word_hash`)
}

#[inline]
fn word_hash(b: &[u8]) -> u64 {
    let mut h = Fx(b.len() as u64);
    h.write(b);
    h.finish()
}

impl Words {
    #[inline]
    fn len(&self) -> usize {
        self.ranges.len()
    }
    #[inline]
    fn get(&self, i: usize) -> &str {
        let (a, b) = self.ranges[i];
        &self.buf[a as usize..b as usize]
    }
    /// `lexical.word_span(text, first, last)`
    fn span(&self, first: usize, last: usize) -> (usize, usize) {
        if last >= self.len() {
            return (self.nchars, self.nchars);
        }
        (self.cspans[first].0 as usize, self.cspans[last].1 as usize)
    }
}

static WORDS_CALLS: AtomicUsize = AtomicUsize::new(0);
static WORDS_BYTES: AtomicUsize = AtomicUsize::new(0);

/// ASCII byte -> 0 (a separator: `string.punctuation` or `str.isspace`) or its lowercase.
const ASCII_WORD: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        let c = i as u8;
        let sep = c.is_ascii_punctuation()
            || matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f | b' ');
        t[i] = if sep { 0 } else { c.to_ascii_lowercase() };
        i += 1;
    }
    t
};

/// Word boundaries while a text is scanned: `words` pushes each word's char span
/// (`cspans`) and the byte range of its lowercased form in the output (`ranges`), the
/// words joined by one space.
struct WordEdges {
    in_word: bool,
    start: usize,  // char offset of the open word
    bstart: usize, // its byte offset in the output
}

impl WordEdges {
    /// A separator at char `ci`: closes the open word, if any (`out_len`: the output's
    /// length).
    #[inline]
    fn close(&mut self, w: &mut Words, ci: usize, out_len: usize) {
        if self.in_word {
            w.cspans.push((self.start as u32, ci as u32));
            w.ranges.push((self.bstart as u32, out_len as u32));
            self.in_word = false;
        }
    }
    /// A word character at char `ci`: opens a word unless one is open (a space before
    /// it in `out` unless it is the first).
    #[inline]
    fn open(&mut self, ci: usize, out: &mut Vec<u8>) {
        if !self.in_word {
            self.in_word = true;
            self.start = ci;
            if !out.is_empty() {
                out.push(b' ');
            }
            self.bstart = out.len();
        }
    }
}

fn words(py: Python<'_>, text: &str) -> PyResult<Words> {
    #[cfg(feature = "prof")]
    {
        WORDS_CALLS.fetch_add(1, Ordering::Relaxed);
        WORDS_BYTES.fetch_add(text.len(), Ordering::Relaxed);
    }
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut w = Words {
        buf: String::new(),
        ranges: Vec::with_capacity(n / 5 + 4),
        cspans: Vec::with_capacity(n / 5 + 4),
        nchars: 0,
        hashes: Vec::new(),
    };
    if text.is_ascii() {
        // one pass over the bytes: char offsets are byte offsets
        let mut out: Vec<u8> = Vec::with_capacity(n);
        let mut i = 0;
        while i < n {
            while i < n && ASCII_WORD[bytes[i] as usize] == 0 {
                i += 1;
            }
            if i >= n {
                break;
            }
            let s = i;
            if !out.is_empty() {
                out.push(b' ');
            }
            let bs = out.len();
            while i < n {
                let l = ASCII_WORD[bytes[i] as usize];
                if l == 0 {
                    break;
                }
                out.push(l);
                i += 1;
            }
            w.ranges.push((bs as u32, out.len() as u32));
            w.cspans.push((s as u32, i as u32));
        }
        // SAFETY: only ASCII bytes were pushed
        w.buf = unsafe { String::from_utf8_unchecked(out) };
        w.nchars = n;
        return Ok(with_hashes(w));
    }
    let mut out: Vec<u8> = Vec::with_capacity(n + 8);
    let mut edges = WordEdges { in_word: false, start: 0, bstart: 0 };
    let mut ci = 0usize;
    if !text.chars().any(lower_needs_python) {
        // mixed text: ASCII bytes by table, other characters decoded one by one
        let mut i = 0;
        while i < n {
            let b = bytes[i];
            let (sep, clen, ch) = if b < 0x80 {
                (ASCII_WORD[b as usize] == 0, 1, None)
            } else {
                let c = text[i..].chars().next().unwrap();
                (is_py_space(c) || UNI_PUNCT.contains(&c), c.len_utf8(), Some(c))
            };
            if sep {
                edges.close(&mut w, ci, out.len());
            } else {
                edges.open(ci, &mut out);
                match ch {
                    None => out.push(ASCII_WORD[b as usize]),
                    Some(c) => {
                        let mut tmp = [0u8; 4];
                        for l in c.to_lowercase() {
                            out.extend_from_slice(l.encode_utf8(&mut tmp).as_bytes());
                        }
                    }
                }
            }
            i += clen;
            ci += 1;
        }
        edges.close(&mut w, ci, out.len());
        w.nchars = ci;
        // SAFETY: whole UTF-8 sequences only
        w.buf = unsafe { String::from_utf8_unchecked(out) };
        return Ok(with_hashes(w));
    }
    // a character Python must lowercase: here only the words' char spans (`out` holds
    // placeholders); the words come from one `str.lower()` of the text with its
    // separators made spaces (`dep`)
    let mut dep = String::with_capacity(n);
    for c in text.chars() {
        let sep = if c.is_ascii() {
            ASCII_WORD[c as usize] == 0
        } else {
            is_py_space(c) || UNI_PUNCT.contains(&c)
        };
        dep.push(if sep { ' ' } else { c });
        if sep {
            edges.close(&mut w, ci, out.len());
        } else {
            edges.open(ci, &mut out);
            out.push(b'x');
        }
        ci += 1;
    }
    edges.close(&mut w, ci, out.len());
    w.nchars = ci;
    let lowered: String = PyString::new(py, &dep).call_method0("lower")?.extract()?;
    let mut buf = String::with_capacity(lowered.len());
    let mut ranges = Vec::with_capacity(w.cspans.len());
    for word in lowered.split(is_py_space).filter(|s| !s.is_empty()) {
        if !buf.is_empty() {
            buf.push(' ');
        }
        let s = buf.len();
        buf.push_str(word);
        ranges.push((s as u32, buf.len() as u32));
    }
    if ranges.len() != w.cspans.len() {
        return Err(PyValueError::new_err("word count changed by str.lower"));
    }
    w.buf = buf;
    w.ranges = ranges;
    Ok(with_hashes(w))
}

fn with_hashes(mut w: Words) -> Words {
    let bytes = w.buf.as_bytes();
    w.hashes = w.ranges.iter().map(|&(a, b)| word_hash(&bytes[a as usize..b as usize])).collect();
    w
}

/// The distinct words of one side: open addressing on the precomputed word hashes, with
/// string comparison (exact). A word's id is the index of its first occurrence.
struct Vocab {
    mask: usize,
    slots: Vec<u32>, // first-occurrence index + 1; 0 = empty
    ids: Vec<u32>,
}

impl Vocab {
    fn new(w: &Words) -> Vocab {
        let n = w.len();
        let cap = (2 * n + 2).next_power_of_two().max(16);
        let mut v = Vocab { mask: cap - 1, slots: vec![0; cap], ids: Vec::with_capacity(n) };
        for i in 0..n {
            let h = w.hashes[i];
            let mut p = (h as usize) & v.mask;
            loop {
                let s = v.slots[p];
                if s == 0 {
                    v.slots[p] = i as u32 + 1;
                    v.ids.push(i as u32);
                    break;
                }
                let j = (s - 1) as usize;
                if w.hashes[j] == h && w.get(j) == w.get(i) {
                    v.ids.push(j as u32);
                    break;
                }
                p = (p + 1) & v.mask;
            }
        }
        v
    }
    /// The id of word `k` of `other` on this side (`w`), or NONE_ID.
    #[inline]
    fn lookup(&self, w: &Words, other: &Words, k: usize) -> u32 {
        let h = other.hashes[k];
        let mut p = (h as usize) & self.mask;
        loop {
            let s = self.slots[p];
            if s == 0 {
                return NONE_ID;
            }
            let j = (s - 1) as usize;
            if w.hashes[j] == h && w.get(j) == other.get(k) {
                return j as u32;
            }
            p = (p + 1) & self.mask;
        }
    }
}

/// `_stem`
#[inline]
fn stem(word: &str) -> &str {
    let n = if word.is_ascii() { word.len() } else { word.chars().count() };
    for (suffix, keep) in [("ing", 5usize), ("ed", 4), ("es", 4), ("s", 3)] {
        if word.ends_with(suffix) && n >= keep {
            return &word[..word.len() - suffix.len()];
        }
    }
    word
}

const STOP_WORDS: &str = "the a an and or but of to in on at by for with from as is are was were be been being \
it its this that these those they them their we our us you your he she his her i my \
will would shall should can could may might must do does did has have had not no \
so than then there here which who whom what when where while also very any all";

fn py_isdigit(py: Python<'_>, w: &str) -> PyResult<bool> {
    if w.is_ascii() {
        return Ok(!w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()));
    }
    PyString::new(py, w).call_method0("isdigit")?.extract()
}

// ----------------------------------------------------------------------------- char-slice finds (Python str.find / rfind with start, end)

fn py_find(h: &[char], needle: &[char], start: usize, end: usize) -> Option<usize> {
    let end = end.min(h.len());
    if start > end || end - start < needle.len() {
        return None;
    }
    (start..=end - needle.len()).find(|&i| &h[i..i + needle.len()] == needle)
}

fn py_rfind(h: &[char], needle: &[char], start: usize, end: usize) -> Option<usize> {
    let end = end.min(h.len());
    if start > end || end - start < needle.len() {
        return None;
    }
    (start..=end - needle.len()).rev().find(|&i| &h[i..i + needle.len()] == needle)
}

// ----------------------------------------------------------------------------- quotes

fn blank(n: usize, out: &mut String) {
    if n > 0 {
        out.push(BARRIER);
        for _ in 1..n {
            out.push(' ');
        }
    }
}

fn blank_straight(par: &str, out: &mut String) {
    let mut parts: Vec<&str> = par.split('"').collect();
    let mut merged: Option<String> = None;
    if parts.len() % 2 == 0 {
        let last = parts.pop().unwrap();
        let before = parts.pop().unwrap();
        merged = Some(format!("{}\"{}", before, last));
    }
    let total = parts.len() + usize::from(merged.is_some());
    for i in 0..total {
        if i > 0 {
            out.push('"');
        }
        let part: &str = if i < parts.len() { parts[i] } else { merged.as_deref().unwrap() };
        if i % 2 == 1 {
            blank(part.chars().count(), out);
        } else {
            out.push_str(part);
        }
    }
}

/// `lexical.blank_quoted`
fn blank_quoted(text: &str) -> String {
    let mut t: String;
    if text.contains('>') {
        let s = format!("\n{}", text);
        let mut out = String::with_capacity(s.len());
        for (k, part) in s.split("\n>").enumerate() {
            if k == 0 {
                out.push_str(part);
                continue;
            }
            out.push_str("\n>");
            let j = part.find('\n').unwrap_or(part.len());
            blank(part[..j].chars().count(), &mut out);
            out.push_str(&part[j..]);
        }
        t = out[1..].to_string();
    } else {
        t = text.to_string();
    }
    if t.contains(['\u{201c}', '\u{201d}', '\u{201e}', '\u{ab}', '\u{bb}']) {
        t = t.replace(['\u{201c}', '\u{201d}', '\u{201e}', '\u{ab}', '\u{bb}'], "\"");
    }
    if !t.contains('"') {
        return t;
    }
    let mut out = String::with_capacity(t.len() + 8);
    for (k, par) in t.split("\n\n").enumerate() {
        if k > 0 {
            out.push_str("\n\n");
        }
        if par.contains('"') {
            blank_straight(par, &mut out);
        } else {
            out.push_str(par);
        }
    }
    out
}

#[inline]
fn is_opener(c: char) -> bool {
    // `_OPENERS`
    matches!(c, ' ' | '\t' | '\n' | '\x0c' | '\r' | '(' | '[' | '{' | ':' | '\u{2014}' | '\u{2013}' | '-')
}

/// `_may_open_quote` (on the UTF-8 text: no char array unless a quote may open)
fn may_open_quote(text: &str) -> bool {
    let mut seen = 0usize;
    for mark in ['\'', '\u{2018}'] {
        let mut from = 0usize;
        while let Some(off) = text[from..].find(mark) {
            let pos = from + off;
            if pos == 0 || text[..pos].chars().next_back().map_or(true, is_opener) {
                return true;
            }
            seen += 1;
            if seen > MAX_QUOTES {
                return true;
            }
            from = pos + mark.len_utf8();
        }
    }
    false
}

/// RE2 `\s` is `[\t\n\f\r ]`
#[inline]
fn re2_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ')
}
#[inline]
fn sq_open_ctx(c: char) -> bool {
    re2_space(c) || matches!(c, '(' | '[' | '{' | ':' | '\u{2014}' | '\u{2013}' | '-')
}
#[inline]
fn sq_close_ctx(c: char) -> bool {
    re2_space(c)
        || matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '}' | '\u{2014}' | '\u{2013}' | '-')
}

/// The matches of `_source_quotes._SINGLE_QUOTED` as `iter_matches(..., group=1)` gives
/// them: (start, end, group start, group end) in chars, at most `limit`.
///
/// `(?:^|[\s(\[{:—–-])['‘]([^\n]{2,600}?)['’](?:$|[\s.,;:!?)\]}—–-])`, leftmost-first as in
/// RE2: a match starts at the first position s >= pos where either s == 0 and a quote mark
/// is there (`^`), or an opening-context character is at s and a quote mark at s+1 (the
/// class holds no quote mark, so at most one branch applies); the lazy group then ends at
/// the first closing mark j >= q+3 (two characters at least) followed by the end of text
/// (`$`, tried first) or a closing-context character, with no newline in between and
/// j <= q+601. Precomputed next-closing and next-newline tables make this linear.
fn single_quoted(chars: &[char], limit: usize) -> Vec<(usize, usize, usize, usize)> {
    let n = chars.len();
    let mut out = Vec::new();
    if n < 4 {
        return out;
    }
    // next_close[i]: smallest j >= i where a closing mark is followed by $ or close-ctx
    let mut next_close = vec![usize::MAX; n + 1];
    let mut next_nl = vec![usize::MAX; n + 1];
    for i in (0..n).rev() {
        let c = chars[i];
        let valid = (c == '\'' || c == '\u{2019}') && (i + 1 == n || sq_close_ctx(chars[i + 1]));
        next_close[i] = if valid { i } else { next_close[i + 1] };
        next_nl[i] = if c == '\n' { i } else { next_nl[i + 1] };
    }
    let is_quote = |c: char| c == '\'' || c == '\u{2018}';
    let mut pos = 0usize;
    let mut s = 0usize;
    while out.len() < limit && s < n {
        if s < pos {
            s = pos;
            continue;
        }
        let q = if s == 0 && is_quote(chars[0]) {
            Some(0)
        } else if sq_open_ctx(chars[s]) && s + 1 < n && is_quote(chars[s + 1]) {
            Some(s + 1)
        } else {
            None
        };
        if let Some(q) = q {
            if q + 3 < n {
                let j = next_close[q + 3];
                if j != usize::MAX && j <= q + 601 && next_nl[q + 1] >= j {
                    let end = if j + 1 == n { j + 1 } else { j + 2 };
                    out.push((s, end, q + 1, j));
                    pos = end;
                    s = end;
                    continue;
                }
            }
        }
        s += 1;
    }
    out
}

/// `_blank_verbatim_single_quotes(text, chunk_texts)`
fn blank_verbatim_single_quotes(py: Python<'_>, text: String, chunk_texts: &[&str]) -> PyResult<String> {
    if !may_open_quote(&text) {
        return Ok(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let matches = single_quoted(&chars, MAX_QUOTES);
    if matches.is_empty() {
        return Ok(text);
    }
    // char -> byte offsets (for slicing the String)
    let mut cb: Vec<usize> = Vec::with_capacity(chars.len() + 1);
    for (b, _) in text.char_indices() {
        cb.push(b);
    }
    cb.push(text.len());
    let mut runs: Option<Vec<String>> = None;
    let mut out = String::new();
    let mut changed = false;
    let mut pos = 0usize; // bytes
    for (_, end, gs, ge) in matches {
        let inner = &text[cb[gs]..cb[ge]];
        let end_b = cb[end];
        let start_b = text[..end_b].rfind(inner).unwrap();
        let qw = words(py, inner)?;
        if start_b < pos || qw.len() == 0 {
            continue;
        }
        if runs.is_none() {
            let mut rs = Vec::with_capacity(chunk_texts.len());
            for c in chunk_texts {
                rs.push(format!(" {} ", words(py, c)?.buf));
            }
            runs = Some(rs);
        }
        let quoted = format!(" {} ", qw.buf);
        if !runs.as_ref().unwrap().iter().any(|r| r.contains(&quoted)) {
            continue;
        }
        out.push_str(&text[pos..start_b]);
        blank(ge - gs, &mut out);
        changed = true;
        pos = start_b + inner.len();
    }
    if !changed {
        return Ok(text);
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

// ----------------------------------------------------------------------------- reported speech

const ATTRIBUTION: &str = concat!(
    r"(?i-u)\b(?:(?:said|says|stated|states|noted|notes|wrote|writes|told (?:\w+ ){0,2}?",
    r"|explained|explains|added|adds|argued|argues|claimed|claims|insisted|insists",
    r"|maintained|maintains|stressed|stresses|emphasi[sz](?:ed|es)|warned|warns",
    r"|confirmed|confirms|acknowledged|acknowledges|admitted|admits|reiterated",
    r"|reiterates|promised|promises|pledged|pledges|assured (?:\w+ )?|remarked|remarks",
    r"|commented|comments|signall?ed|signals|described (?:it|this|that|them) as",
    r"|put it|puts it)(?:,)?(?: that)?|according to [^,.;:!?\n]{1,60},",
    r"|in (?:the )?(?:his|her|their|its|[\w.'?-]+['?]s) (?:own )?words,",
    r"|as (?:[\w.'?-]+ ){1,4}(?:put|puts|said|says|noted|notes) it,)"
);

/// `_reported_clauses(raw, text)`: `text` as chars (same length as `raw`).
fn reported_clauses(attr: &BRegex, raw: &str, text: &[char]) -> Vec<(usize, usize)> {
    let ascii: Vec<u8>;
    let raw_b: &[u8] = if raw.is_ascii() {
        raw.as_bytes()
    } else {
        ascii = raw.chars().map(|c| if c.is_ascii() { c as u8 } else { b'?' }).collect();
        &ascii
    };
    let mut out: Vec<(usize, usize)> = Vec::new();
    let quoted = text.contains(&BARRIER);
    const MARKS: [&[char]; 4] = [&['.', ' '], &['!', ' '], &['?', ' '], &['\n']];
    for m in attr.find_iter(raw_b).take(MAX_CUES) {
        let cue_end = m.end();
        if let Some(last) = out.last() {
            if cue_end < last.1 {
                continue;
            }
        }
        let limit = cue_end + 600;
        let mut end = text.len().min(limit);
        for mark in MARKS {
            if let Some(i) = py_find(text, mark, cue_end, limit) {
                if i < end {
                    end = i;
                }
            }
        }
        if quoted {
            let start = cue_end.saturating_sub(600);
            let begin = MARKS
                .iter()
                .map(|mark| py_rfind(text, mark, start, cue_end).map(|i| i as isize).unwrap_or(-1))
                .max()
                .unwrap();
            if py_find(text, &[BARRIER], begin.max(0) as usize, end).is_some() {
                continue;
            }
        }
        out.push((cue_end, end));
    }
    out
}

// ----------------------------------------------------------------------------- phase timers (feature "prof")

#[cfg(feature = "prof")]
static PROF: [std::sync::atomic::AtomicU64; 8] = [
    std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0),
];

/// Time `$e` into phase `$i` when built with `--features prof`; otherwise just `$e`.
macro_rules! timed {
    ($i:expr, $e:expr) => {{
        #[cfg(feature = "prof")]
        let t0 = std::time::Instant::now();
        let r = $e;
        #[cfg(feature = "prof")]
        PROF[$i].fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }};
}

/// Nanoseconds spent per phase so far (all zero unless built with `--features prof`):
/// chunk filter, chunk words, whole side, outside side (blanking + words), checks,
/// clauses, reported speech, detect total.
#[pyfunction]
fn prof_stats() -> Vec<u64> {
    #[cfg(feature = "prof")]
    {
        PROF.iter().map(|a| a.load(Ordering::Relaxed)).collect()
    }
    #[cfg(not(feature = "prof"))]
    {
        vec![0; 8]
    }
}

// ----------------------------------------------------------------------------- the detector

struct Side {
    text: String,
    chars: Option<Vec<char>>,
    words: Words,
    vocab: Vocab,
}

impl Side {
    fn new(py: Python<'_>, text: String) -> PyResult<Side> {
        let words = words(py, &text)?;
        let vocab = Vocab::new(&words);
        Ok(Side { text, chars: None, words, vocab })
    }
    fn chars(&mut self) -> &[char] {
        if self.chars.is_none() {
            self.chars = Some(self.text.chars().collect());
        }
        self.chars.as_ref().unwrap()
    }
}

const NONE_ID: u32 = u32::MAX;

fn first_span(side_ids: &[u32], n: usize, shared: &FxSet<&[u32]>) -> Option<(usize, usize)> {
    let keys: Vec<&[u32]> = side_ids.windows(n).collect();
    for i in 0..keys.len() {
        if shared.contains(keys[i]) {
            let mut j = i;
            while j + 1 < keys.len() && shared.contains(keys[j + 1]) {
                j += 1;
            }
            return Some((i, j + n - 1));
        }
    }
    None
}

/// Chunk windows of length n made only of side words (ids != NONE_ID).
fn valid_windows<'a>(ids: &'a [u32], run: &'a [u32], n: usize) -> impl Iterator<Item = &'a [u32]> + 'a {
    let count = if ids.len() >= n { ids.len() - n + 1 } else { 0 };
    (0..count).filter(move |&i| run[i] as usize >= n).map(move |i| &ids[i..i + n])
}

/// `_check`: (shared long n-grams, frac, word span) when it fires.
fn check(
    side: &Side,
    cw: &Words,
    long_n: usize,
    short_n: usize,
    min_frac: f64,
    min_shared: usize,
) -> Option<(usize, f64, (usize, usize))> {
    let least = long_n.min(short_n);
    let sw = &side.words;
    if cw.len() < least || sw.len() < least {
        return None;
    }
    let side_ids: &[u32] = &side.vocab.ids;
    let chunk_ids: Vec<u32> = (0..cw.len()).map(|k| side.vocab.lookup(sw, cw, k)).collect();
    // run[i]: side words in a row from chunk word i (capped)
    let mut run = vec![0u32; chunk_ids.len() + 1];
    let mut any_run = false;
    for i in (0..chunk_ids.len()).rev() {
        run[i] = if chunk_ids[i] == NONE_ID { 0 } else { run[i + 1].saturating_add(1) };
        if run[i] as usize >= least {
            any_run = true;
        }
    }
    if !any_run {
        return None;
    }
    // the chunk's n-grams made of side words only (usually few), then the side's n-grams
    // looked up in them: the same intersections as `mine & chunk` in Python
    let chunk_short: FxSet<&[u32]> = valid_windows(&chunk_ids, &run, short_n).collect();
    let mut shared_short: FxSet<&[u32]> = FxSet::default();
    if !chunk_short.is_empty() {
        for w in side_ids.windows(short_n) {
            if chunk_short.contains(w) {
                shared_short.insert(w);
            }
        }
    }
    if long_n >= short_n && shared_short.is_empty() {
        return None;
    }
    let mut shared_long: FxSet<&[u32]> = FxSet::default();
    let mut long_possible = true;
    if long_n >= short_n {
        // a shared long n-gram is a run of long_n - short_n + 1 shared short ones
        let need = long_n - short_n + 1;
        let mut streak = 0usize;
        long_possible = false;
        for w in side_ids.windows(short_n) {
            if shared_short.contains(w) {
                streak += 1;
                if streak >= need {
                    long_possible = true;
                    break;
                }
            } else {
                streak = 0;
            }
        }
    }
    if long_possible {
        let chunk_long: FxSet<&[u32]> = valid_windows(&chunk_ids, &run, long_n).collect();
        if !chunk_long.is_empty() {
            for w in side_ids.windows(long_n) {
                if chunk_long.contains(w) {
                    shared_long.insert(w);
                }
            }
        }
    }
    if shared_long.is_empty() && shared_short.len() < min_shared {
        return None;
    }
    // distinct short n-grams of the side (`len(mine)`), needed only from here on
    let mine_len = if side_ids.len() >= short_n {
        side_ids.windows(short_n).collect::<FxSet<&[u32]>>().len()
    } else {
        0
    };
    let frac = if mine_len == 0 { 0.0 } else { shared_short.len() as f64 / mine_len as f64 };
    if shared_long.is_empty() && !(frac >= min_frac && shared_short.len() >= min_shared) {
        return None;
    }
    let (i, last) = if !shared_long.is_empty() {
        first_span(side_ids, long_n, &shared_long)?
    } else {
        first_span(side_ids, short_n, &shared_short)?
    };
    Some((shared_long.len(), frac, sw.span(i, last)))
}

fn first_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((b, _)) => &s[..b],
        None => s,
    }
}

#[pyclass(module = "ragpulse_source_policy")]
struct SourcePolicy {
    no_use_ngram: usize,
    no_use_overlap_ngram: usize,
    no_use_min_overlap: f64,
    quote_ngram: usize,
    quote_long_ngram: usize,
    quote_min_overlap: f64,
    min_shared: usize,
    reported_min_overlap: f64,
    reported_min_words: usize,
    attribution: BRegex,
    stop: FxSet<&'static str>,
    cat_no_use: Py<PyString>,
    cat_quote: Py<PyString>,
}

type Found = (Py<PyString>, String, usize, usize);

impl SourcePolicy {
    /// `_reported`
    fn reported(
        &self,
        py: Python<'_>,
        text: &[char],
        clauses: &[(usize, usize)],
        cw: &Words,
    ) -> PyResult<Option<(usize, usize, usize, usize, usize)>> {
        if clauses.is_empty() {
            return Ok(None);
        }
        let cset: FxSet<&str> = (0..cw.len()).map(|i| cw.get(i)).collect();
        let mut cpairs: Option<FxSet<(&str, &str)>> = None;
        for &(start, end) in clauses {
            let sub: String = text[start..end].iter().collect();
            let ws = words(py, &sub)?;
            if ws.len() < self.reported_min_words {
                continue;
            }
            let mut mine: FxSet<&str> = FxSet::default();
            for i in 0..ws.len() {
                let w = ws.get(i);
                if self.stop.contains(w) {
                    continue;
                }
                let long = if w.is_ascii() { w.len() > 2 } else { w.chars().count() > 2 };
                if long || py_isdigit(py, w)? {
                    mine.insert(stem(w));
                }
            }
            if mine.is_empty() {
                continue;
            }
            let mut shared = 0usize;
            let mut form = String::new();
            for &st in &mine {
                let mut hit = false;
                for suffix in ["", "s", "es", "ed", "ing"] {
                    form.clear();
                    form.push_str(st);
                    form.push_str(suffix);
                    if cset.contains(form.as_str()) && stem(&form) == st {
                        hit = true;
                        break;
                    }
                }
                if hit {
                    shared += 1;
                }
            }
            if shared < 3 || (shared as f64) < self.reported_min_overlap * (mine.len() as f64) {
                continue;
            }
            if cpairs.is_none() {
                let stems: Vec<&str> = (0..cw.len()).map(|i| stem(cw.get(i))).collect();
                cpairs = Some(stems.windows(2).map(|p| (p[0], p[1])).collect());
            }
            let cp = cpairs.as_ref().unwrap();
            let stems: Vec<&str> = (0..ws.len()).map(|i| stem(ws.get(i))).collect();
            let pairs: FxSet<(&str, &str)> =
                stems.windows(2).map(|p| (p[0], p[1])).filter(|p| cp.contains(p)).collect();
            if pairs.len() < 2 {
                continue;
            }
            let lead = text[start..end].iter().take_while(|&&c| is_py_space(c)).count();
            return Ok(Some((shared, mine.len(), pairs.len(), start + lead, end)));
        }
        Ok(None)
    }
}

#[pymethods]
impl SourcePolicy {
    #[new]
    #[args(
        no_use_ngram = "8",
        no_use_overlap_ngram = "5",
        no_use_min_overlap = "0.2",
        quote_ngram = "5",
        quote_long_ngram = "8",
        quote_min_overlap = "0.15",
        min_shared = "2",
        reported_min_overlap = "0.6",
        reported_min_words = "6"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        no_use_ngram: usize,
        no_use_overlap_ngram: usize,
        no_use_min_overlap: f64,
        quote_ngram: usize,
        quote_long_ngram: usize,
        quote_min_overlap: f64,
        min_shared: i64,
        reported_min_overlap: f64,
        reported_min_words: i64,
    ) -> PyResult<Self> {
        for v in [no_use_ngram, no_use_overlap_ngram, quote_ngram, quote_long_ngram] {
            if !(1..=64).contains(&v) {
                return Err(PyValueError::new_err("n-gram sizes must be in 1..64"));
            }
        }
        let attribution = BRegexBuilder::new(ATTRIBUTION)
            .dfa_size_limit(16 << 20)
            .build()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(SourcePolicy {
            no_use_ngram,
            no_use_overlap_ngram,
            no_use_min_overlap,
            quote_ngram,
            quote_long_ngram,
            quote_min_overlap,
            min_shared: min_shared.max(1) as usize,
            reported_min_overlap,
            reported_min_words: reported_min_words.max(2) as usize,
            attribution,
            stop: STOP_WORDS.split_whitespace().collect(),
            cat_no_use: PyString::intern(py, "no_use_copy").into(),
            cat_quote: PyString::intern(py, "quote_only_paraphrase").into(),
        })
    }

    /// `SourcePolicyDetector.__call__(event)` as (category, evidence, start, end) tuples.
    fn detect(&self, py: Python<'_>, event: &PyAny) -> PyResult<Vec<Found>> {
        timed!(7, self.detect_inner(py, event))
    }
}

impl SourcePolicy {
    /// `_check` of chunk words `cw` against `side`, with a no_use chunk's options
    /// (`no_use`) or a quote_only one's; on a hit its evidence and span: "chunk {id}: {n}
    /// shared {long}-grams, {pct}% of {short}-grams", the percentage rounded half to even
    /// as CPython's `%` format does.
    fn check_chunk(
        &self,
        side: &Side,
        cw: &Words,
        no_use: bool,
        id_of: &impl Fn() -> PyResult<String>,
    ) -> PyResult<Option<(String, usize, usize)>> {
        let (long_n, short_n, min_frac) = if no_use {
            (self.no_use_ngram, self.no_use_overlap_ngram, self.no_use_min_overlap)
        } else {
            (self.quote_long_ngram, self.quote_ngram, self.quote_min_overlap)
        };
        let Some((nlong, frac, (s, e))) =
            timed!(4, check(side, cw, long_n, short_n, min_frac, self.min_shared))
        else {
            return Ok(None);
        };
        let ev = format!(
            "chunk {}: {} shared {}-grams, {}% of {}-grams",
            id_of()?,
            nlong,
            long_n,
            (frac * 100.0).round_ties_even() as i64,
            short_n
        );
        Ok(Some((ev, s, e)))
    }

    fn detect_inner(&self, py: Python<'_>, event: &PyAny) -> PyResult<Vec<Found>> {
        #[cfg(feature = "prof")]
        let t0 = std::time::Instant::now();
        let ctx: &PyList = event.getattr(pyo3::intern!(py, "retrieved_context"))?.downcast()?;
        let mut chunks: Vec<(bool, &PyAny, &str)> = Vec::new(); // (no_use, chunk, content)
        for c in ctx.iter() {
            let policy: &PyString = c.getattr(pyo3::intern!(py, "policy"))?.downcast()?;
            let policy = policy.to_str()?;
            if policy == "summarize" {
                continue;
            }
            let content: &PyString = c.getattr(pyo3::intern!(py, "content"))?.downcast()?;
            chunks.push((policy == "no_use", c, content.to_str()?));
        }
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        let response: &PyString = event.getattr(pyo3::intern!(py, "response"))?.downcast()?;
        let response = response.to_str()?;
        #[cfg(feature = "prof")]
        PROF[0].fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        if response.is_empty() {
            return Ok(Vec::new());
        }
        let mut whole: Option<Side> = None;
        let mut outside: Option<Side> = None;
        let mut clauses: Option<Vec<(usize, usize)>> = None;
        let mut found: Vec<Found> = Vec::new();
        for &(no_use, chunk, content) in &chunks {
            let cw = timed!(1, words(py, content))?;
            let id_of = || -> PyResult<String> {
                let id: &PyString = chunk.getattr(pyo3::intern!(py, "id"))?.downcast()?;
                Ok(first_chars(id.to_str()?, 60).to_string())
            };
            if no_use {
                if whole.is_none() {
                    whole = Some(timed!(2, Side::new(py, response.to_string()))?);
                }
                let side = whole.as_ref().unwrap();
                if let Some((ev, s, e)) = self.check_chunk(side, &cw, true, &id_of)? {
                    found.push((self.cat_no_use.clone_ref(py), ev, s, e));
                }
            } else {
                if outside.is_none() {
                    let quote_only: Vec<&str> =
                        chunks.iter().filter(|c| !c.0).map(|c| c.2).collect();
                    outside = Some(timed!(3, {
                        let text = blank_verbatim_single_quotes(py, blank_quoted(response), &quote_only)?;
                        Side::new(py, text)
                    })?);
                }
                let side = outside.as_mut().unwrap();
                if let Some((ev, s, e)) = self.check_chunk(side, &cw, false, &id_of)? {
                    found.push((self.cat_quote.clone_ref(py), ev, s, e));
                    continue;
                }
                if clauses.is_none() {
                    let chars = side.chars();
                    clauses = Some(timed!(5, reported_clauses(&self.attribution, response, chars)));
                }
                let chars = side.chars.as_ref().unwrap();
                if let Some((shared, mine, pairs, s, e)) =
                    timed!(6, self.reported(py, chars, clauses.as_ref().unwrap(), &cw))?
                {
                    let ev = format!(
                        "chunk {}: reported speech, {}/{} content words and {} word pairs in the chunk",
                        id_of()?,
                        shared,
                        mine,
                        pairs
                    );
                    found.push((self.cat_quote.clone_ref(py), first_chars(&ev, 160).to_string(), s, e));
                }
            }
        }
        Ok(found)
    }
}

// ----------------------------------------------------------------------------- helpers exposed for checks and micro-benchmarks

/// `lexical.words(text)`
#[pyfunction]
fn py_words(py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
    let w = words(py, text)?;
    Ok((0..w.len()).map(|i| w.get(i).to_string()).collect())
}

/// `lexical.word_span(text, first, last)`
#[pyfunction]
fn py_word_span(py: Python<'_>, text: &str, first: usize, last: usize) -> PyResult<(usize, usize)> {
    Ok(words(py, text)?.span(first, last))
}

/// `lexical.blank_quoted(text)`
#[pyfunction]
fn py_blank_quoted(text: &str) -> String {
    blank_quoted(text)
}

/// `[(start, end, group) for ... in iter_matches(_SINGLE_QUOTED, text, MAX_QUOTES, group=1)]`
#[pyfunction]
fn py_single_quoted(text: &str) -> Vec<(usize, usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    single_quoted(&chars, MAX_QUOTES)
        .into_iter()
        .map(|(s, e, gs, ge)| (s, e, chars[gs..ge].iter().collect()))
        .collect()
}

/// `_blank_verbatim_single_quotes(text, chunk_texts)`
#[pyfunction]
fn py_blank_verbatim(py: Python<'_>, text: String, chunk_texts: Vec<String>) -> PyResult<String> {
    let refs: Vec<&str> = chunk_texts.iter().map(|s| s.as_str()).collect();
    blank_verbatim_single_quotes(py, text, &refs)
}

/// `_reported_clauses(raw, text)`
#[pyfunction]
fn py_reported_clauses(raw: &str, text: &str) -> PyResult<Vec<(usize, usize)>> {
    static ATTR: std::sync::OnceLock<BRegex> = std::sync::OnceLock::new();
    let attr = ATTR.get_or_init(|| BRegexBuilder::new(ATTRIBUTION).dfa_size_limit(16 << 20).build().unwrap());
    let chars: Vec<char> = text.chars().collect();
    if chars.len() != raw.chars().count() {
        return Err(PyValueError::new_err("raw and text differ in length"));
    }
    Ok(reported_clauses(attr, raw, &chars))
}

/// Is `c` whitespace for `str.split()` here (checked against `str.isspace` by measure.py)?
#[pyfunction]
fn py_is_space(c: char) -> bool {
    is_py_space(c)
}

/// The lowercase this module uses for `c`, or None when it asks Python.
#[pyfunction]
fn py_lower_char(c: char) -> Option<String> {
    if lower_needs_python(c) {
        None
    } else {
        Some(c.to_lowercase().collect())
    }
}

/// (calls, bytes) of `words` so far (profiling aid; zero unless built with `--features prof`)
#[pyfunction]
fn words_stats() -> (usize, usize) {
    (WORDS_CALLS.load(Ordering::Relaxed), WORDS_BYTES.load(Ordering::Relaxed))
}

/// Words of every text `reps` times, in Rust only: (total words, nanoseconds) (profiling aid)
#[pyfunction]
fn bench_words(py: Python<'_>, texts: Vec<String>, reps: usize) -> PyResult<(usize, u64)> {
    let t0 = std::time::Instant::now();
    let mut total = 0;
    for _ in 0..reps {
        for t in &texts {
            total += words(py, t)?.len();
        }
    }
    Ok((total, t0.elapsed().as_nanos() as u64))
}

#[pymodule]
fn ragpulse_source_policy(_py: Python<'_>, m: &PyModule) -> PyResult<()> {
    m.add_class::<SourcePolicy>()?;
    m.add_function(wrap_pyfunction!(py_words, m)?)?;
    m.add_function(wrap_pyfunction!(py_word_span, m)?)?;
    m.add_function(wrap_pyfunction!(py_blank_quoted, m)?)?;
    m.add_function(wrap_pyfunction!(py_single_quoted, m)?)?;
    m.add_function(wrap_pyfunction!(py_blank_verbatim, m)?)?;
    m.add_function(wrap_pyfunction!(py_reported_clauses, m)?)?;
    m.add_function(wrap_pyfunction!(py_is_space, m)?)?;
    m.add_function(wrap_pyfunction!(py_lower_char, m)?)?;
    m.add_function(wrap_pyfunction!(words_stats, m)?)?;
    m.add_function(wrap_pyfunction!(prof_stats, m)?)?;
    m.add_function(wrap_pyfunction!(bench_words, m)?)?;
    Ok(())
}
