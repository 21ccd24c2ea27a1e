/// The seed's customer id standard (`phone_hash`): the SHA-256 of the normalised phone number,
/// in lower-case hex, sent as `cuid` with `cuidType` `phone_hash` in `LoginEvent` and
/// `SignUpEvent`. `:login` and `:signup` send what an app following the standard sends.
///
/// Normalising: every character but the digits goes; a Russian or Kazakh number becomes
/// `7XXXXXXXXXX` (a leading `8` of eleven digits becomes `7`; ten digits get the `7` in front);
/// other numbers keep their digits.
enum PhoneHash {
    /// The `cuidType` the standard names.
    static let cuidType = "phone_hash"

    /// The characters a phone number is written with, besides its digits.
    private static let punctuation: Set<Character> = ["+", "(", ")", "-", " ", "."]

    /// `text` normalised, when it is written as a phone number (10 to 15 digits and the usual
    /// punctuation, nothing else); nil for any other id.
    static func normalised(_ text: String) -> String? {
        guard text.allSatisfy({ $0.isASCII && ($0.isNumber || punctuation.contains($0)) }) else { return nil }
        let digits = text.filter(\.isNumber)
        guard (10...15).contains(digits.count) else { return nil }
        if digits.count == 11, digits.first == "8" { return "7" + digits.dropFirst() }
        if digits.count == 10 { return "7" + digits }
        return digits
    }

    /// The `cuid` of `text`, when it is a phone number.
    static func cuid(_ text: String) -> String? {
        normalised(text).map { SHA256.hex(Array($0.utf8)) }
    }
}
