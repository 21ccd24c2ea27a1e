import Foundation

extension JSONValue {
    /// Reads one JSON text strictly (see `JSONReader` for the exact language), straight from
    /// the bytes: no `JSONDecoder`, no trial decoding of each value as every possible type.
    ///
    /// Duplicate member names: the last one wins, as in `JSONSerialization` and ECMAScript
    /// (RFC 8259 leaves it open). Names are Swift `String`s, so two canonically equivalent
    /// spellings of a name are one member.
    package init(parsing data: some ContiguousBytes) throws(JSONReadError) {
        self = try JSONReader.read(data) { reader throws(JSONReadError) in
            let value = try reader.readValue()
            try reader.finish()
            return value
        }
    }

    /// Reads one JSON text held in a string, such as a campaign's `custom.json`.
    package init(parsing text: String) throws(JSONReadError) {
        var text = text
        let outcome = text.withUTF8 { bytes in
            Result { () throws(JSONReadError) in try JSONValue(parsing: UnsafeRawBufferPointer(bytes)) }
        }
        self = try outcome.get()
    }
}

extension JSONReader {
    /// Reads the next value, of any kind, as a `JSONValue`.
    /// How many members an object is expected to have when its first one is read.
    private static let expectedMemberCount = 6

    mutating func readValue() throws(JSONReadError) -> JSONValue {
        switch try peek() {
        case .object:
            var members: [String: JSONValue] = [:]
            try readObject { reader, key throws(JSONReadError) in
                // Room for a button's or a product's few members at once, instead of growing
                // (and hashing every key again) at the second, third and fifth.
                if members.isEmpty { members.reserveCapacity(Self.expectedMemberCount) }
                let name = reader.string(key)
                members[name] = try reader.readValue()
            }
            return .object(members)
        case .array:
            var elements: [JSONValue] = []
            try readArray { reader throws(JSONReadError) in elements.append(try reader.readValue()) }
            return .array(elements)
        case .string: return .string(try readString())
        case .number: return .number(try readNumber())
        case .bool: return .bool(try readBool())
        case .null:
            try readNull()
            return .null
        }
    }

    /// Reads the next value as an object's members, or `nil` after skipping a value of
    /// another kind.
    mutating func readObjectValueOrSkip() throws(JSONReadError) -> [String: JSONValue]? {
        guard try peek() == .object else {
            try skipValue()
            return nil
        }
        return try readValue().objectValue
    }
}
