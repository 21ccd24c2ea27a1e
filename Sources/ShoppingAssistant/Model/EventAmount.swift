import Foundation

/// A sum of money in an event (`value`, `itemPrice`, B10), kept as a decimal so that it
/// reaches Gravity as written: `19.99` travels as `19.99`, never as `19.989999999999998`.
///
/// Write it as a literal (`1990`, `19.99`) or make one from your own `Decimal` amounts. A
/// `Double` is read as the shortest decimal that identifies it, so a literal keeps its digits;
/// sums computed in `Double` keep their rounding errors (`0.1 + 0.2` is
/// `0.30000000000000004`), so add money up as `Decimal`.
public struct EventAmount: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral
{
    /// The amount; a JSON number on the wire, digit for digit.
    public let decimal: Decimal

    /// An amount from an exact decimal (your catalogue's prices, a cart's total).
    public init(_ decimal: Decimal) { self.decimal = decimal }

    /// An amount from a whole number of the currency's units.
    public init(_ value: Int) { decimal = Decimal(value) }

    /// An amount from a `Double`, as its shortest decimal spelling (`19.99`, not the binary
    /// fraction next to it). A NaN or an infinity is not a number Gravity can read: an event
    /// carrying one is refused (B10).
    public init(_ value: Double) {
        guard value.isFinite else {
            decimal = .nan
            return
        }
        decimal = Decimal(string: "\(value)", locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(value)
    }

    /// `1990` in code is exactly 1990.
    public init(integerLiteral value: Int) { self.init(value) }

    /// `19.99` in code is exactly 19.99.
    public init(floatLiteral value: Double) { self.init(value) }

    /// The amount as it travels (`1990.5`).
    public var description: String { decimal.description }
}
