//! Field readers shared by every view: one pass over an object's members, then a reader per
//! field that applies the owned types' rule for it (strict for required fields, lenient for the
//! ones the schema marks default-on-error).

use crate::wire::json::{
    ValueKind, skip_string_unchecked, skip_value_unchecked, skip_ws_unchecked,
};
use crate::wire::{JsonStr, RawValue};

use super::error::{Detail, Fault};

pub(crate) type Read<'a, T> = Result<T, Fault<'a>>;

/// `{}`: what absent or `null` params read as.
pub(crate) const EMPTY_OBJECT: RawValue<'static> = RawValue::new_unchecked("{}");

/// The values of the members named `keys`, in one pass over `object` (which must be an
/// object). Unknown members are ignored; a known member sent twice is refused, as the owned
/// types' derived decoders refuse it.
#[inline]
pub(crate) fn members<'a, const N: usize>(
    object: RawValue<'a>,
    keys: [&'static str; N],
) -> Read<'a, [Option<RawValue<'a>>; N]> {
    let mut slots = [None; N];
    // Bounded by the text: every step consumes one member.
    for (key, value) in object.fields() {
        let found = match key.as_plain() {
            Some(plain) => keys.iter().position(|k| *k == plain),
            None => keys.iter().position(|k| key.eq_str(k)),
        };
        if let Some(index) = found {
            if slots[index].is_some() {
                return Err(Fault::field(keys[index], Detail::Duplicate));
            }
            slots[index] = Some(value);
        }
    }
    Ok(slots)
}

/// Checks that a value is an object.
#[inline]
pub(crate) fn object(value: RawValue<'_>) -> Read<'_, RawValue<'_>> {
    if value.kind() == ValueKind::Object {
        Ok(value)
    } else {
        Err(Fault::here(Detail::MustBe("a JSON object")))
    }
}

/// A required member that must be an object.
#[inline]
pub(crate) fn required_object<'a>(
    value: Option<RawValue<'a>>,
    key: &'static str,
) -> Read<'a, RawValue<'a>> {
    let value = value.ok_or_else(|| Fault::field(key, Detail::Required))?;
    object(value).map_err(|fault| fault.at(key))
}

/// A required string member.
#[inline]
pub(crate) fn required_str<'a>(
    value: Option<RawValue<'a>>,
    key: &'static str,
) -> Read<'a, JsonStr<'a>> {
    match value.and_then(|v| v.as_str()) {
        Some(string) => Ok(string),
        None => Err(no_string(value.is_some(), key)),
    }
}

/// Why [`required_str`] found no string: out of the hot path.
#[cold]
fn no_string(sent: bool, key: &'static str) -> Fault<'static> {
    let detail = if sent {
        Detail::MustBe("a string")
    } else {
        Detail::Required
    };
    Fault::field(key, detail)
}

/// An optional string with no leniency (`Option<String>` without a default-on-error mark):
/// absent and `null` are `None`, other non-strings are refused.
#[inline]
pub(crate) fn strict_opt_str<'a>(
    value: Option<RawValue<'a>>,
    key: &'static str,
) -> Read<'a, Option<JsonStr<'a>>> {
    match value {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or_else(|| Fault::field(key, Detail::MustBe("a string"))),
    }
}

/// A default-on-error optional string: anything but a string reads as absent.
#[inline]
pub(crate) fn lenient_str(value: Option<RawValue<'_>>) -> Option<JsonStr<'_>> {
    value?.as_str()
}

/// `_meta` and other free-form objects: kept when an object, dropped otherwise.
#[inline]
pub(crate) fn lenient_object(value: Option<RawValue<'_>>) -> Option<RawValue<'_>> {
    value.filter(|v| v.kind() == ValueKind::Object)
}

/// Whether a `_meta` was sent but is no object ([`lenient_object`] drops it).
#[inline]
pub(crate) fn dropped(meta: Option<RawValue<'_>>) -> bool {
    meta.is_some_and(|v| v.kind() != ValueKind::Object)
}

/// A default-on-error flag: only `true` is true.
#[inline]
pub(crate) fn flag(value: Option<RawValue<'_>>) -> bool {
    value.and_then(|v| v.as_bool()).unwrap_or(false)
}

/// Any JSON value where `null` means absent (`Option<serde_json::Value>`).
#[inline]
pub(crate) fn any_value(value: Option<RawValue<'_>>) -> Option<RawValue<'_>> {
    value.filter(|v| !v.is_null())
}

/// An integer as serde_json hands it to a visitor: `u64` when it fits, else `i64`; `None` for
/// floats and integers beyond both (serde_json reads those as floats).
pub(crate) fn integer(value: RawValue<'_>) -> Option<i128> {
    value
        .as_u64()
        .map(i128::from)
        .or_else(|| value.as_i64().map(i128::from))
}

/// The elements of a required array, or the owned types' error for a non-array.
#[inline]
pub(crate) fn required_array<'a>(
    value: Option<RawValue<'a>>,
    key: &'static str,
    noun: &'static str,
) -> Read<'a, RawValue<'a>> {
    let value = value.ok_or_else(|| Fault::field(key, Detail::Required))?;
    if value.kind() == ValueKind::Array {
        Ok(value)
    } else {
        Err(Fault::field(key, Detail::MustBe(noun)))
    }
}

/// An array marked skip-invalid-items: the array when it is one.
#[inline]
pub(crate) fn lenient_array(value: Option<RawValue<'_>>) -> Option<RawValue<'_>> {
    value.filter(|v| v.kind() == ValueKind::Array)
}

/// A required member of any kind.
#[inline]
pub(crate) fn required<'a>(
    value: Option<RawValue<'a>>,
    key: &'static str,
) -> Read<'a, RawValue<'a>> {
    value.ok_or_else(|| Fault::field(key, Detail::Required))
}

/// Walks the members of the object whose `{` is at `text[open]` (validated text), handing each
/// key and the offset where its value starts to `member`, which returns the offset just past
/// the value: by skipping it ([`skip`]) or by reading it in place (a descent), so a nested
/// object is walked once instead of skipped and then walked again. Returns the offset just past
/// the closing `}`.
#[inline]
pub(crate) fn walk<'a>(
    text: &'a str,
    open: usize,
    member: impl FnMut(JsonStr<'a>, usize) -> Read<'a, usize>,
) -> Read<'a, usize> {
    walk_from(text, first_member(text, open), member)
}

/// [`walk`] of the members that follow one already read (a [`leading_tag`]) whose value ends
/// at `after`: the tag is not scanned again.
#[inline]
pub(crate) fn walk_after<'a>(
    text: &'a str,
    after: usize,
    member: impl FnMut(JsonStr<'a>, usize) -> Read<'a, usize>,
) -> Read<'a, usize> {
    walk_from(text, next_member(text, after), member)
}

/// Where the first member of the object whose `{` is at `text[open]` starts (or its `}`).
#[inline]
pub(crate) fn first_member(text: &str, open: usize) -> usize {
    skip_ws_unchecked(text.as_bytes(), open + 1)
}

/// Where the member after the value ending at `after` starts (or the object's `}`).
#[inline]
pub(crate) fn next_member(text: &str, after: usize) -> usize {
    let bytes = text.as_bytes();
    let pos = skip_ws_unchecked(bytes, after);
    if bytes.get(pos) == Some(&b',') {
        skip_ws_unchecked(bytes, pos + 1)
    } else {
        pos
    }
}

/// The loop of [`walk`], from `pos`: where a key or the closing `}` is.
#[inline(always)]
pub(crate) fn walk_from<'a>(
    text: &'a str,
    mut pos: usize,
    mut member: impl FnMut(JsonStr<'a>, usize) -> Read<'a, usize>,
) -> Read<'a, usize> {
    let bytes = text.as_bytes();
    // Bounded by the text: every step moves past one member (the callbacks return offsets
    // past their value, and a non-advancing one is forced forward).
    loop {
        match bytes.get(pos) {
            Some(b'"') => {}
            Some(b'}') => return Ok(pos + 1),
            _ => return Ok(bytes.len()),
        }
        let (key_end, escaped) = skip_string_unchecked(bytes, pos + 1);
        let key = text
            .get(pos + 1..key_end.saturating_sub(1))
            .unwrap_or_default();
        let colon = skip_ws_unchecked(bytes, key_end);
        let value = skip_ws_unchecked(bytes, colon + 1);
        let end = member(JsonStr::new_unchecked(key, escaped), value)?;
        pos = next_member(text, end.max(value + 1));
    }
}

/// The name `key` (as sent) spells, for a `match` on the member names a reader knows: the key
/// itself when it has no escapes (most keys), else the name in `names` it decodes to, else
/// the key as sent (which holds a `\`, so matches no name).
#[inline]
pub(crate) fn key_name<'a>(key: JsonStr<'a>, names: &[&'static str]) -> &'a str {
    match key.as_plain() {
        Some(plain) => plain,
        None => escaped_key_name(key, names),
    }
}

#[cold]
fn escaped_key_name<'a>(key: JsonStr<'a>, names: &[&'static str]) -> &'a str {
    names
        .iter()
        .find(|name| key.eq_str(name))
        .copied()
        .unwrap_or(key.raw())
}

/// Skips the value starting at `text[start]`; returns the offset just past it.
#[inline]
pub(crate) fn skip(text: &str, start: usize) -> usize {
    skip_value_unchecked(text.as_bytes(), start)
}

/// The value spanning `text[start..end]`.
#[inline]
pub(crate) fn span(text: &str, start: usize, end: usize) -> RawValue<'_> {
    RawValue::new_unchecked(text.get(start..end).unwrap_or_default())
}

/// Stores a member's value in its slot, refusing a second occurrence.
#[inline]
pub(crate) fn fill<'a>(
    slot: &mut Option<RawValue<'a>>,
    key: &'static str,
    value: RawValue<'a>,
) -> Read<'a, ()> {
    if slot.replace(value).is_some() {
        return Err(Fault::field(key, Detail::Duplicate));
    }
    Ok(())
}

/// Whether `key` (as sent) is `name`.
#[inline]
pub(crate) fn is(key: JsonStr<'_>, name: &str) -> bool {
    match key.as_plain() {
        Some(plain) => plain == name,
        None => key.eq_str(name),
    }
}

/// Whether the first key of the object whose `{` is at `text[open]` is `tag`, sent plain.
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn first_key_is(text: &str, open: usize, tag: &str) -> bool {
    first_key_end(text, open, tag).is_some()
}

/// Where the closing quote of the first key of the object at `text[open]` is, when that key
/// is `tag` as sent: its bytes, then the quote (an escaped spelling holds a `\`, so never
/// matches). No scan: the key is compared in place.
#[inline(always)]
fn first_key_end(text: &str, open: usize, tag: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let key_start = skip_ws_unchecked(bytes, open + 1) + 1;
    let key_end = key_start + tag.len();
    (bytes.get(key_start - 1) == Some(&b'"')
        && bytes.get(key_start..key_end) == Some(tag.as_bytes())
        && bytes.get(key_end) == Some(&b'"'))
    .then_some(key_end)
}

/// Which of `names` the first member of the object at `text[open]` names when that member is
/// `tag`, sent plain (no escapes in key or value), and the offset just past its value: for
/// readers that dispatch on the tag and then walk the rest ([`walk_after`]). `None` for any
/// other first member or tag value, which those readers read the slow way.
#[inline(always)]
pub(crate) fn leading_tag<const N: usize>(
    text: &str,
    open: usize,
    tag: &str,
    names: [&'static str; N],
) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let key_end = first_key_end(text, open, tag)?;
    let value = skip_ws_unchecked(bytes, skip_ws_unchecked(bytes, key_end + 1) + 1) + 1;
    if bytes.get(value - 1) != Some(&b'"') {
        return None;
    }
    // The value is compared with each name in place, its closing quote included: no scan
    // for its end, and an escaped spelling matches no name.
    // Inlined with constant names, each compare is a few loads; the closing quote first
    // turns away the names of another length.
    for (index, name) in names.iter().enumerate() {
        let end = value + name.len();
        if bytes.get(end) == Some(&b'"') && bytes.get(value..end) == Some(name.as_bytes()) {
            return Some((index, end + 1));
        }
    }
    None
}

/// [`members`] of the members after a [`leading_tag`] whose value ends at `after`, and the
/// offset just past the object, in one walk.
#[inline]
pub(crate) fn members_after<'a, const N: usize>(
    text: &'a str,
    after: usize,
    keys: [&'static str; N],
) -> Read<'a, ([Option<RawValue<'a>>; N], usize)> {
    let mut slots = [None; N];
    let end = walk_after(text, after, collect(text, &mut slots, &keys))?;
    Ok((slots, end))
}

/// The member callback of [`members_after`]: each value of a key in `keys` into its slot.
#[inline(always)]
fn collect<'a, 's, const N: usize>(
    text: &'a str,
    slots: &'s mut [Option<RawValue<'a>>; N],
    keys: &'s [&'static str; N],
) -> impl FnMut(JsonStr<'a>, usize) -> Read<'a, usize> + 's
where
    'a: 's,
{
    move |key, at| {
        let end = skip(text, at);
        let name = key_name(key, keys);
        if let Some(index) = keys.iter().position(|k| *k == name) {
            fill(&mut slots[index], keys[index], span(text, at, end))?;
        }
        Ok(end)
    }
}

/// A member wanted as a string: when its value at `text[at]` is one, its span goes into `slot`
/// and the string into `string`, both from the one scan that finds its end; returns the
/// offset past it. `None` when it is no string: the caller stores it by its field's own rule.
#[inline(always)]
pub(crate) fn fill_string<'a>(
    text: &'a str,
    at: usize,
    slot: &mut Option<RawValue<'a>>,
    string: &mut Option<JsonStr<'a>>,
    key: &'static str,
) -> Read<'a, Option<usize>> {
    let Some((value, end)) = read_string(text, at) else {
        return Ok(None);
    };
    fill(slot, key, span(text, at, end))?;
    *string = Some(value);
    Ok(Some(end))
}

/// The string value at `text[start]` (when it is one) and the offset past it, in one scan.
#[inline(always)]
pub(crate) fn read_string(text: &str, start: usize) -> Option<(JsonStr<'_>, usize)> {
    if text.as_bytes().get(start) != Some(&b'"') {
        return None;
    }
    let (end, escaped) = skip_string_unchecked(text.as_bytes(), start + 1);
    let inner = text.get(start + 1..end.saturating_sub(1))?;
    Some((JsonStr::new_unchecked(inner, escaped), end))
}

/// Walks the elements of the array whose `[` is at `text[open]`, handing each index and the
/// offset where the element starts to `element`, which returns the offset just past it.
/// Returns the offset just past the closing `]`.
#[inline]
pub(crate) fn walk_array<'a>(
    text: &'a str,
    open: usize,
    mut element: impl FnMut(usize, usize) -> Read<'a, usize>,
) -> Read<'a, usize> {
    let bytes = text.as_bytes();
    let mut pos = skip_ws_unchecked(bytes, open + 1);
    let mut index = 0;
    loop {
        match bytes.get(pos) {
            None => return Ok(bytes.len()),
            Some(b']') => return Ok(pos + 1),
            Some(_) => {}
        }
        let end = element(index, pos)?;
        index += 1;
        pos = skip_ws_unchecked(bytes, end.max(pos + 1));
        if bytes.get(pos) == Some(&b',') {
            pos = skip_ws_unchecked(bytes, pos + 1);
        }
    }
}

/// The items of a validated array, each read in place by `read_at`, which returns the item and
/// the offset just past it: one walk over every item, where iterating raw elements and then
/// reading each would skip it first and walk it again.
#[derive(Clone)]
pub(crate) struct ItemsAt<'a, T> {
    text: &'a str,
    pos: usize,
    read_at: fn(&'a str, usize) -> (Read<'a, T>, usize),
}

impl<'a, T> ItemsAt<'a, T> {
    /// The items of `array` (empty when it is not an array).
    pub(crate) fn new(
        array: RawValue<'a>,
        read_at: fn(&'a str, usize) -> (Read<'a, T>, usize),
    ) -> Self {
        let text = array.get();
        let pos = if text.starts_with('[') { 1 } else { text.len() };
        Self { text, pos, read_at }
    }
}

impl<'a, T> ItemsAt<'a, T> {
    /// The items of `array` after the one ending at offset `end` of its text.
    pub(crate) fn after(
        array: RawValue<'a>,
        end: usize,
        read_at: fn(&'a str, usize) -> (Read<'a, T>, usize),
    ) -> Self {
        let text = array.get();
        let pos = next_member(text, end);
        Self { text, pos, read_at }
    }
}

impl<'a, T> Iterator for ItemsAt<'a, T> {
    type Item = Read<'a, T>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        let pos = skip_ws_unchecked(bytes, self.pos);
        match bytes.get(pos) {
            None | Some(b']' | b'}' | b',' | b':') => {
                self.pos = bytes.len();
                return None;
            }
            Some(_) => {}
        }
        let (item, end) = (self.read_at)(self.text, pos);
        // Always make progress, whatever the text holds.
        let mut next = skip_ws_unchecked(bytes, end.max(pos + 1));
        if bytes.get(next) == Some(&b',') {
            next += 1;
        }
        self.pos = next;
        Some(item)
    }
}
