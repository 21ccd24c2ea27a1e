/// Makes untrusted text safe to print on a terminal.
///
/// Product names, replies and transcript contents come from servers and files we do not
/// control. Printed raw, an escape sequence in them could clear the screen (`ESC[2J`), plant a
/// disguised hyperlink (OSC 8), write the user's clipboard (OSC 52), retitle the window,
/// or redraw earlier lines with `\r` and cursor moves so a price reads differently. So every
/// such string goes through `sanitize(_:newlines:)` before it is printed:
///
/// - escape sequences are removed whole, never just their `ESC`, so no parameter bytes leak
///   out as visible junk: CSI (`ESC [` … final byte), OSC (`ESC ]` … BEL or ST), DCS, SOS, PM
///   and APC strings (`ESC P`/`X`/`^`/`_` … ST), `nF` escapes (`ESC (` B) and two-character
///   escapes (`ESC c`), plus their 8-bit C1 forms (`\u{9b}`, `\u{9d}`, …);
/// - a sequence cut off by the end of the text is dropped to the end, as a terminal would
///   swallow it;
/// - every other C0 and C1 control character and DEL is dropped, a tab becomes a space;
/// - bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the
///   bidi marks (LRM, RLM, ALM) are dropped, because they can make text read in a different
///   order than it is stored;
/// - invisible format characters are dropped: zero-width space, ZWNJ, word joiner and the
///   invisible operators, BOM, soft hyphen, the Mongolian vowel separator, interlinear
///   annotation marks, the deprecated format characters, the Egyptian, shorthand and musical
///   format controls and tag characters. They take no column, so they can hide text between
///   visible characters (tags even spell out whole ASCII words nobody sees). What needs them
///   keeps them: a ZWJ between two emoji (👨‍👩‍👧), and the tags of an emoji tag sequence (a black
///   flag, up to eight tags and a cancel tag: 🏴󠁧󠁢󠁳󠁣󠁴󠁿);
/// - line breaks (`\n`, `\r\n`, a lone `\r`, NEL, U+2028, U+2029) become `\n` or a space, as
///   the caller asks: a lone `\r` would otherwise let later text overwrite earlier text.
///
/// Everything else, including combining marks, variation selectors and any script, is kept.
/// One pass over the text, whatever it holds.
package enum TerminalSanitizer {
    /// What happens to line breaks.
    package enum Newlines: Sendable, Hashable {
        /// Every line break becomes `\n`, for multi-line text such as a reply.
        case keep
        /// Every line break becomes a space, for text that must stay on one line.
        case space
    }

    /// `text` without control characters, escape sequences or bidi overrides.
    package static func sanitize(_ text: String, newlines: Newlines = .space) -> String {
        let scalars = Array(text.unicodeScalars)
        LayoutWorkMeter.record(scalars.count)
        var result = String.UnicodeScalarView()
        let lineBreak: Unicode.Scalar = newlines == .keep ? "\n" : " "
        var previous: Unicode.Scalar?
        var tagsKeptUntil = -1
        var index = 0
        while index < scalars.count {
            defer { previous = result.last }
            let value = scalars[index].value
            switch value {
            case 0x1b:
                index = endOfEscape(scalars, escapeAt: index)
                continue
            case 0x9b:
                index = endOfControlSequence(scalars, from: index + 1)
                continue
            case 0x90, 0x98, 0x9d, 0x9e, 0x9f:
                index = endOfControlString(scalars, from: index + 1)
                continue
            case 0x0d where index + 1 < scalars.count && scalars[index + 1] == "\n":
                break  // the `\n` that follows is the line break
            case 0x0a, 0x0d, 0x85, 0x2028, 0x2029:
                result.append(lineBreak)
            case 0x09:
                result.append(" ")
            case 0x00...0x1f, 0x7f...0x9f, 0x202a...0x202e, 0x2066...0x2069:
                break
            case 0x200d:
                if let previous, joinsEmoji(after: previous), index + 1 < scalars.count,
                    continuesEmojiSequence(scalars[index + 1])
                {
                    result.append(scalars[index])
                }
            case 0xe0020...0xe007f:
                if index <= tagsKeptUntil {
                    result.append(scalars[index])
                } else if previous == "\u{1f3f4}", let end = endOfEmojiTags(scalars, from: index) {
                    tagsKeptUntil = end
                    result.append(scalars[index])
                }
            case _ where isInvisibleFormat(value):
                break
            default:
                result.append(scalars[index])
            }
            index += 1
        }
        return String(result)
    }

    // MARK: - Format characters

    /// Format characters (general category Cf) that draw nothing and that no text shown on a
    /// terminal needs. The prepended concatenation marks (U+0600…) are Cf too, but visible.
    private static func isInvisibleFormat(_ value: UInt32) -> Bool {
        switch value {
        case 0xad, 0x61c, 0x180e, 0x200b, 0x200c, 0x200e, 0x200f, 0x2060...0x2064, 0x206a...0x206f, 0xfeff,
            0xfff9...0xfffb, 0x13430...0x1343f, 0x1bca0...0x1bca3, 0x1d173...0x1d17a, 0xe0001:
            return true
        default:
            return false
        }
    }

    /// An emoji. ASCII digits, `#` and `*` are emoji only as keycap bases, never inside a ZWJ
    /// sequence.
    private static func isEmoji(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0x7f && scalar.properties.isEmoji
    }

    /// An emoji a ZWJ sequence may continue with: not a flag letter or a skin tone, which only
    /// ever follow their base directly.
    private static func continuesEmojiSequence(_ scalar: Unicode.Scalar) -> Bool {
        isEmoji(scalar) && !(0x1f1e6...0x1f1ff).contains(scalar.value) && !(0x1f3fb...0x1f3ff).contains(scalar.value)
    }

    /// Whether a ZWJ after `scalar` can be part of an emoji ZWJ sequence: after an emoji, its
    /// presentation selector or its skin tone.
    private static func joinsEmoji(after scalar: Unicode.Scalar) -> Bool {
        scalar == "\u{fe0f}" || isEmoji(scalar)
    }

    /// The index of the cancel tag ending an emoji tag sequence whose tags start at `start`,
    /// or nil when the tags are not one (too many, or no cancel tag).
    private static func endOfEmojiTags(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        var end = start
        while end < scalars.count, end - start <= 8 {
            switch scalars[end].value {
            case 0xe007f: return end > start ? end : nil
            case 0xe0020...0xe007e: end += 1
            default: return nil
            }
        }
        return nil
    }

    // MARK: - Sequence scanning

    /// The index just after the escape sequence that starts with the `ESC` at `index`.
    private static func endOfEscape(_ scalars: [Unicode.Scalar], escapeAt index: Int) -> Int {
        let next = index + 1
        guard next < scalars.count else { return next }
        switch scalars[next].value {
        case 0x5b:  // [
            return endOfControlSequence(scalars, from: next + 1)
        case 0x5d, 0x50, 0x58, 0x5e, 0x5f:  // ] P X ^ _
            return endOfControlString(scalars, from: next + 1)
        case 0x20...0x2f:  // nF: intermediates, then one final byte
            var end = next
            while end < scalars.count, (0x20...0x2f).contains(scalars[end].value) { end += 1 }
            if end < scalars.count, (0x30...0x7e).contains(scalars[end].value) { end += 1 }
            return end
        case 0x30...0x7e:  // a two-character escape such as ESC c or ESC 7
            return next + 1
        default:  // not a sequence: drop the ESC alone and look at what follows on its own
            return next
        }
    }

    /// The index after a CSI's final byte, given the index after its introducer. A byte that
    /// cannot belong to a CSI ends it early and is examined on its own.
    private static func endOfControlSequence(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
        var end = start
        while end < scalars.count, (0x20...0x3f).contains(scalars[end].value) { end += 1 }
        if end < scalars.count, (0x40...0x7e).contains(scalars[end].value) { end += 1 }
        return end
    }

    /// The index after the terminator of an OSC, DCS, SOS, PM or APC string: BEL, ST
    /// (`ESC \` or `\u{9c}`), or CAN/SUB, which abort it. An `ESC` that does not start an ST
    /// ends the string and begins a new sequence, as in xterm.
    private static func endOfControlString(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
        var end = start
        while end < scalars.count {
            switch scalars[end].value {
            case 0x07, 0x9c, 0x18, 0x1a:
                return end + 1
            case 0x1b:
                return end + 1 < scalars.count && scalars[end + 1] == "\\" ? end + 2 : end
            default:
                end += 1
            }
        }
        return end
    }
}
