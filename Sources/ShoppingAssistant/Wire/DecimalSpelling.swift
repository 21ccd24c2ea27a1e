import Foundation

extension Decimal {
    /// The decimal spelled as `description` spells it (`1990`, `19.99`, `0.05`, `-3`), which is
    /// how an amount travels. Foundation spells a decimal by dividing its 128-bit significand by
    /// ten once per digit, about a microsecond per amount on the engine's actor for every event;
    /// a significand that fits 64 bits (any price) is spelled with one integer conversion, and
    /// anything else is left to Foundation.
    var plainSpelling: String { integerSpelling ?? description }

    /// The spelling from the significand as a 64-bit integer, checked to be exact; `nil` for
    /// zero, NaN and a significand past 64 bits.
    var integerSpelling: String? {
        guard isFinite, !isZero else { return nil }
        let significand = self.significand
        let whole = NSDecimalNumber(decimal: significand).uint64Value
        guard Decimal(whole) == significand else { return nil }
        var digits = String(whole)
        let exponent = self.exponent
        if exponent > 0 {
            digits += String(repeating: "0", count: exponent)
        } else if exponent < 0 {
            let fraction = -exponent
            if digits.utf8.count > fraction {
                digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -fraction))
            } else {
                digits = "0." + String(repeating: "0", count: fraction - digits.utf8.count) + digits
            }
        }
        return sign == .plus ? digits : "-" + digits
    }
}
