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
    mutating func readValue() throws(JSONReadError) -> JSONValue {
        var members: [(String, JSONValue)] = []
        return try readValue(collecting: &members)
    }

    /// `readValue()`, with one list for the members of every object being read (a stack: an
    /// object's members follow those of the objects it is in): each object's dictionary is made
    /// once its members are known, with room for exactly them, instead of growing (and hashing
    /// every key again) as they come.
    private mutating func readValue(collecting members: inout [(String, JSONValue)]) throws(JSONReadError)
        -> JSONValue
    {
        switch try peek() {
        case .object:
            let first = members.count
            try readObject { reader, key throws(JSONReadError) in
                let name = reader.string(key)
                let value = try reader.readValue(collecting: &members)
                members.append((name, value))
            }
            var object = [String: JSONValue](minimumCapacity: members.count - first)
            for (name, value) in members[first...] { object[name] = value }  // the last of a name wins
            members.removeSubrange(first...)
            return .object(object)
        case .array:
            var elements: [JSONValue] = []
            try readArray { reader throws(JSONReadError) in
                elements.append(try reader.readValue(collecting: &members))
            }
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
