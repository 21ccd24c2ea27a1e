import AssistantREPL

/// Invisible format characters in text a transcript writes, spelled as JSON escapes
/// (`\u202e`): bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069), the marks (U+200E, U+200F) and every other format character (Unicode's
/// `Cf`: zero-width space, joiners, BOM, tags…). Raw, they make a line of a file read in
/// another order than it is stored, or hide text a reviewer never sees; escaped, a JSON body
/// means the same and every byte shows in a diff.
enum FormatControls {
    /// `text` with each format character written `\uXXXX` (lower-case hex; a character beyond
    /// U+FFFF as its surrogate pair, as JSON spells it).
    static func escape(_ text: String) -> String { spell(text, where: isFormat) }

    /// `text` as a terminal may print it: what `escape` spells, and every control character
    /// but the line feed and the tab — ESC, BEL, CR, DEL and the C1 controls — spelled
    /// `\u001b` too. A replay's report quotes the file and what the engine sent; raw, a line
    /// of either could retitle the terminal, recolour it or move its cursor.
    static func visible(_ text: String) -> String {
        spell(text) { isFormat($0) || (DisplayWidth.isControl($0) && $0 != "\n" && $0 != "\t") }
    }

    /// `text` with each scalar `spelled` picks written `\uXXXX`.
    private static func spell(_ text: String, where spelled: (Unicode.Scalar) -> Bool) -> String {
        guard text.unicodeScalars.contains(where: spelled) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard spelled(scalar) else {
                out.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            }
        }
        return String(out)
    }

    /// Whether `scalar` is a format character. The first is U+00AD and none lies in
    /// U+0100–U+05FF (Latin, Greek, Cyrillic…), so most text is told without a table lookup.
    static func isFormat(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.value >= 0xAD, !(0x100..<0x600).contains(scalar.value) else { return false }
        return scalar.properties.generalCategory == .format
    }
}
