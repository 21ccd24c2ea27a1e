import Foundation
import ShoppingAssistant

/// Compares the engine's strict JSON reader (`JSONValue(parsing:)`) with Foundation's
/// `JSONSerialization` on the same bytes; shared by the seeded property test and the fuzzer.
///
/// `JSONSerialization` runs with `.fragmentsAllowed`, since RFC 8259 lets any value be the
/// top-level value and so does our reader. Both must accept or both reject, and accepted
/// values must be equal:
/// - `null`, booleans and strings exactly (strings by Unicode scalars, not by the canonical
///   equivalence of `String ==`);
/// - numbers as `Double`; exactly, except where Foundation returns an `NSDecimalNumber`
///   (long mantissas), whose conversion to `Double` is not correctly rounded — those agree
///   to a relative 1e-12;
/// - arrays element by element; objects by member names as Swift strings, order ignored.
///   Duplicate names: the last one wins on both sides.
///
/// Where Foundation is lenient or different, the comparison says so instead of failing
/// (`Deviation`); tests pin our side of each.
package enum JSONDifferential {
    /// A documented difference between Foundation and RFC 8259 as our reader applies it.
    package enum Deviation: String, Sendable, Hashable, CaseIterable {
        /// Foundation accepts a comma before `]` or `}`; we reject it. The input is compared
        /// again with the comma removed, so the rest of it is still checked.
        case trailingComma = "trailing comma accepted by Foundation"
        /// Foundation guesses UTF-16 or UTF-32 from NUL bytes or a UTF-16/32 byte order mark
        /// in the first four bytes; we read UTF-8 only (RFC 8259 § 8.1), so there is nothing
        /// to compare.
        case otherEncoding = "UTF-16/32 detected by Foundation"
        /// Foundation checks a number's range only when it builds the value, so a number beyond
        /// `Double` in a member that a later duplicate name overwrites is never checked; we
        /// reject it wherever it is. The input is compared again with that number as `0`.
        case overwrittenNumberOutOfRange = "out-of-range number in an overwritten member accepted by Foundation"
        /// Foundation returned an `NSDecimalNumber` whose `doubleValue` is not the correctly
        /// rounded value of the literal; the values agreed within the tolerance.
        case decimalRounding = "NSDecimalNumber rounding"
        /// Foundation drops a raw U+FEFF at the start of a string or member name, and right
        /// after an escape sequence (it decodes each run of unescaped bytes on its own and
        /// strips a leading U+FEFF as if it were a byte order mark); we keep the text as sent.
        /// With raw U+FEFF in the input, strings are compared with every U+FEFF set aside;
        /// when that makes two member names one, there is nothing to compare.
        case byteOrderMarkInString = "leading U+FEFF in a string dropped by Foundation"
    }

    package enum Outcome: Sendable, Hashable {
        /// Both read the bytes the same way (`accepted` says which way), allowing `deviations`.
        case agree(accepted: Bool, deviations: Set<Deviation>)
        /// Foundation read another encoding than UTF-8: no comparison possible.
        case excluded(Deviation)
        /// A disagreement that no documented deviation explains.
        case mismatch(String)
    }

    /// At most this many repairs (a trailing comma removed, an overwritten number set to 0)
    /// before the input is compared again.
    static let maximumRepairs = 64

    package static func compare(_ bytes: [UInt8]) -> Outcome {
        let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        if guessesOtherEncoding(bytes) {
            if foundation == nil, (try? JSONValue(parsing: bytes)) == nil {
                return .agree(accepted: false, deviations: [])
            }
            return .excluded(.otherEncoding)
        }
        var deviations: Set<Deviation> = []
        var input = bytes
        for _ in 0...maximumRepairs {
            let ours: JSONValue
            do throws(JSONReadError) {
                ours = try JSONValue(parsing: input)
            } catch {
                guard let foundation else { return .agree(accepted: false, deviations: deviations) }
                guard input.indices.contains(error.offset) else {
                    return .mismatch("Foundation accepted \(describe(foundation)), we rejected: \(error)")
                }
                switch error.reason {
                case .trailingComma:
                    deviations.insert(.trailingComma)
                    input.remove(at: error.offset)
                case .numberOutOfRange:
                    deviations.insert(.overwrittenNumberOutOfRange)
                    let numberCharacters = Array("+-.eE0123456789".utf8)
                    let end = input[error.offset...].firstIndex { !numberCharacters.contains($0) } ?? input.endIndex
                    input.replaceSubrange(error.offset..<end, with: [UInt8(ascii: "0")])
                default:
                    return .mismatch("Foundation accepted \(describe(foundation)), we rejected: \(error)")
                }
                continue
            }
            guard let foundation else {
                return .mismatch("we accepted \(ours), Foundation rejected")
            }
            var comparison = Comparison(byteOrderMarks: containsByteOrderMark(input.dropFirst()))
            if let difference = comparison.difference(ours, foundation, path: "$") {
                if comparison.ambiguous { return .excluded(.byteOrderMarkInString) }
                return .mismatch(difference)
            }
            deviations.formUnion(comparison.deviations)
            return .agree(accepted: true, deviations: deviations)
        }
        return .mismatch("more than \(maximumRepairs) repairs")
    }

    /// Foundation's encoding detection (`JSONSerialization` reads UTF-16 and UTF-32 too).
    static func guessesOtherEncoding(_ bytes: [UInt8]) -> Bool {
        let head = bytes.prefix(4)
        if head.contains(0) { return true }
        return head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE])
    }

    /// A raw U+FEFF (EF BB BF) anywhere in `bytes`.
    static func containsByteOrderMark(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index + 2 < bytes.endIndex {
            if bytes[index] == 0xEF, bytes[index + 1] == 0xBB, bytes[index + 2] == 0xBF { return true }
            index += 1
        }
        return false
    }

    /// One comparison of two values, noting the deviations it had to allow.
    private struct Comparison {
        /// The input has strings that start with a raw U+FEFF, which Foundation drops.
        let byteOrderMarks: Bool
        var deviations: Set<Deviation> = []
        /// Dropping U+FEFF made two of our member names one: no comparison possible.
        var ambiguous = false

        init(byteOrderMarks: Bool) { self.byteOrderMarks = byteOrderMarks }

        /// Where `ours` and Foundation's value differ, or `nil` if they are equal.
        mutating func difference(_ ours: JSONValue, _ theirs: Any, path: String) -> String? {
            switch ours {
            case .null:
                return theirs is NSNull ? nil : "\(path): null vs \(describe(theirs))"
            case .bool(let value):
                guard let number = theirs as? NSNumber, isBoolean(number), number.boolValue == value else {
                    return "\(path): \(value) vs \(describe(theirs))"
                }
                return nil
            case .number(let value):
                guard let number = theirs as? NSNumber, !isBoolean(number) else {
                    return "\(path): \(value) vs \(describe(theirs))"
                }
                let other = number.doubleValue
                if other == value { return nil }
                if number is NSDecimalNumber, value.isFinite, other.isFinite,
                    abs(other - value) <= 1e-12 * max(abs(value), abs(other))
                {
                    deviations.insert(.decimalRounding)
                    return nil
                }
                return "\(path): \(value) vs \(describe(theirs)) (\(other))"
            case .string(let value):
                guard let string = theirs as? String, same(value, string) else {
                    return "\(path): \(value.debugDescription) vs \(describe(theirs))"
                }
                return nil
            case .array(let elements):
                guard let array = theirs as? [Any], array.count == elements.count else {
                    return "\(path): array of \(elements.count) vs \(describe(theirs))"
                }
                for (index, element) in elements.enumerated() {
                    if let difference = difference(element, array[index], path: "\(path)[\(index)]") {
                        return difference
                    }
                }
                return nil
            case .object(let members):
                guard let object = theirs as? [String: Any] else {
                    return "\(path): object vs \(describe(theirs))"
                }
                if byteOrderMarks, Self.collide(Array(members.keys)) || Self.collide(Array(object.keys)) {
                    ambiguous = true
                    return "\(path): member names that differ only in U+FEFF"
                }
                var matched: Set<String> = []
                for (name, value) in members {
                    guard let theirName = counterpart(of: name, in: object) else {
                        return "\(path): member \(name.debugDescription) missing"
                    }
                    guard matched.insert(theirName).inserted else {
                        ambiguous = true
                        return "\(path): two members are \(theirName.debugDescription) for Foundation"
                    }
                    if let difference = difference(value, object[theirName] as Any, path: "\(path).\(name)") {
                        return difference
                    }
                }
                guard matched.count == object.count else {
                    return "\(path): object of \(members.count) members vs \(describe(theirs))"
                }
                return nil
            }
        }

        /// Foundation's name for our member `name`.
        private mutating func counterpart(of name: String, in object: [String: Any]) -> String? {
            if object[name] != nil { return name }
            guard byteOrderMarks else { return nil }
            let wanted = Self.withoutByteOrderMarks(name)
            let candidates = object.keys.filter { Self.withoutByteOrderMarks($0) == wanted }
            guard let candidate = candidates.first else { return nil }
            if candidates.count > 1 { ambiguous = true }
            deviations.insert(.byteOrderMarkInString)
            return candidate
        }

        /// Strings compare by scalars (`String ==` would equate canonically equivalent text).
        private mutating func same(_ ours: String, _ theirs: String) -> Bool {
            if ours.unicodeScalars.elementsEqual(theirs.unicodeScalars) { return true }
            guard byteOrderMarks,
                Self.withoutByteOrderMarks(ours).elementsEqual(Self.withoutByteOrderMarks(theirs))
            else { return false }
            deviations.insert(.byteOrderMarkInString)
            return true
        }

        /// Do two of `names` become one without their U+FEFF?
        private static func collide(_ names: [String]) -> Bool {
            Set(names.map { String(String.UnicodeScalarView(withoutByteOrderMarks($0))) }).count != names.count
        }

        private static func withoutByteOrderMarks(_ text: String) -> [Unicode.Scalar] {
            text.unicodeScalars.filter { $0 != "\u{FEFF}" }
        }
    }

    /// `true` and `false` come back as `NSNumber`s of type `c` (`CFBoolean`).
    fileprivate static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    fileprivate static func describe(_ value: Any) -> String {
        String(describing: value).prefix(200) + " (\(type(of: value)))"
    }
}
