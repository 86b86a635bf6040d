import Foundation
import GRDB

/// Decodes a model from a row as GRDB's `Decodable` records do (the same conversions:
/// `T.fromDatabaseValue` for SQLite's values, dates and UUIDs; JSON text for nested values),
/// without asking at run time which protocols each field's type conforms to. On Linux each such
/// first question scans every protocol conformance in the binary, which made decoding the first
/// rows of a command cost more than the query.
struct RowDecoder: Decoder {
    let row: Row
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowContainer<Key>(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: [], debugDescription: "a row decodes as a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            Any.self, .init(codingPath: [], debugDescription: "a row decodes as a keyed container"))
    }
}

private struct RowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: Row
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { row.hasColumn(key.stringValue) }

    func decodeNil(forKey key: Key) throws -> Bool {
        (row[key.stringValue] as DatabaseValue?)?.isNull ?? true
    }

    private func value<T: DatabaseValueConvertible>(_ key: Key) throws -> T {
        guard let stored = row[key.stringValue] as DatabaseValue? else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: [], debugDescription: "no column \(key.stringValue)"))
        }
        guard let value = T.fromDatabaseValue(stored) else {
            throw DecodingError.valueNotFound(
                T.self, .init(codingPath: [key], debugDescription: "column \(key.stringValue) holds \(stored)"))
        }
        return value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // Type identity, not protocol conformance: a pointer comparison.
        if T.self == Date.self { return try value(key) as Date as! T }
        if T.self == UUID.self { return try value(key) as UUID as! T }
        if T.self == Data.self { return try value(key) as Data as! T }
        // Anything else was stored as JSON text, as GRDB stores nested values.
        let text: String = try value(key)
        return try JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw DecodingError.typeMismatch(
            type, .init(codingPath: [key], debugDescription: "columns hold no nested containers"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: [key], debugDescription: "columns hold no nested containers"))
    }

    func superDecoder() throws -> any Decoder { RowDecoder(row: row) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: row) }
}
