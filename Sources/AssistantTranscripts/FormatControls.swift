/// Invisible format characters in text a transcript writes, spelled as JSON escapes
/// (`\u202e`): bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069), the marks (U+200E, U+200F) and every other format character (Unicode's
/// `Cf`: zero-width space, joiners, BOM, tags…). Raw, they make a line of a file read in
/// another order than it is stored, or hide text a reviewer never sees; escaped, a JSON body
/// means the same and every byte shows in a diff.
enum FormatControls {
    /// `text` with each format character written `\uXXXX` (lower-case hex; a character beyond
    /// U+FFFF as its surrogate pair, as JSON spells it).
    static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isFormat) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isFormat(scalar) else {
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
