import Foundation
import MarginCore
import PostgresNIO

/// One column's value as the store binds it.
enum ColumnValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case boolean(Bool)
    case date(Date)
    case uuid(UUID)

    init(_ value: StoreValue) {
        switch value {
        case .null: self = .null
        case .integer(let int): self = .integer(int)
        case .real(let double): self = .real(double)
        case .text(let text): self = .text(text)
        case .date(let date): self = .date(date)
        case .uuid(let uuid): self = .uuid(uuid)
        }
    }

    /// A letter for the kind of value (`PostgresDialect.kinds`).
    var kind: Character {
        switch self {
        case .null: "n"
        case .integer: "i"
        case .real: "r"
        case .text: "t"
        case .boolean: "b"
        case .date: "d"
        case .uuid: "u"
        }
    }

    func bind(into bindings: inout PostgresBindings) {
        switch self {
        case .null: bindings.appendNull()
        case .integer(let int): bindings.append(int)
        case .real(let double): bindings.append(double)
        case .text(let text): bindings.append(text)
        case .boolean(let bool): bindings.append(bool)
        case .date(let date): bindings.append(date)
        case .uuid(let uuid): bindings.append(uuid)
        }
    }
}

/// A model's columns, in the order its `Codable` conformance writes them: scalars as
/// themselves, anything nested (a highlight's rects) as JSON text, as the SQLite store keeps them.
final class ColumnEncoder: Encoder {
    var columns: [(name: String, value: ColumnValue)] = []
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    static func columns<M: Model>(of model: M) throws -> [(name: String, value: ColumnValue)] {
        let encoder = ColumnEncoder()
        try model.encode(to: encoder)
        return encoder.columns
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Columns<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        preconditionFailure("a model is a keyed container of columns")
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        preconditionFailure("a model is a keyed container of columns")
    }

    fileprivate func set(_ key: String, _ value: ColumnValue) {
        if let index = columns.firstIndex(where: { $0.name == key }) {
            columns[index].value = value
        } else {
            columns.append((key, value))
        }
    }

    private struct Columns<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ColumnEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { encoder.set(key.stringValue, .null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { encoder.set(key.stringValue, .boolean(value)) }
        mutating func encode(_ value: String, forKey key: Key) throws { encoder.set(key.stringValue, .text(value)) }
        mutating func encode(_ value: Double, forKey key: Key) throws { encoder.set(key.stringValue, .real(value)) }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            encoder.set(key.stringValue, .integer(Int64(value)))
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws { encoder.set(key.stringValue, .integer(value)) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            switch value {
            case let date as Date: encoder.set(key.stringValue, .date(date))
            case let uuid as UUID: encoder.set(key.stringValue, .uuid(uuid))
            case let int as Int: encoder.set(key.stringValue, .integer(Int64(int)))
            case let int as Int64: encoder.set(key.stringValue, .integer(int))
            case let double as Double: encoder.set(key.stringValue, .real(double))
            case let bool as Bool: encoder.set(key.stringValue, .boolean(bool))
            case let text as String: encoder.set(key.stringValue, .text(text))
            default:
                let json = try JSONEncoder().encode(value)
                encoder.set(key.stringValue, .text(String(decoding: json, as: UTF8.self)))
            }
        }

        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            preconditionFailure("nested values are encoded whole, as JSON")
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            preconditionFailure("nested values are encoded whole, as JSON")
        }
        mutating func superEncoder() -> any Encoder { encoder }
        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
    }
}

/// A model read from a row: each key is the column of that name.
struct ColumnDecoder: Decoder {
    let row: PostgresRandomAccessRow
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Columns<Key>(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: codingPath, debugDescription: "a row is a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            Any.self, .init(codingPath: codingPath, debugDescription: "a row is a keyed container"))
    }

    private struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: PostgresRandomAccessRow
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { row.contains(key.stringValue) }

        func decodeNil(forKey key: Key) throws -> Bool {
            !row.contains(key.stringValue) || row[key.stringValue].bytes == nil
        }

        private func cell(_ key: Key) throws -> PostgresCell {
            guard row.contains(key.stringValue) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "no such column"))
            }
            return row[key.stringValue]
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try cell(key).decode(Bool.self) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try cell(key).decode(String.self) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try cell(key).decode(Double.self) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { Int(try cell(key).decode(Int64.self)) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try cell(key).decode(Int64.self) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let cell = try cell(key)
            let value: Any
            switch type {
            case is Date.Type: value = try cell.decode(Date.self)
            case is UUID.Type: value = try cell.decode(UUID.self)
            case is Int.Type: value = Int(try cell.decode(Int64.self))
            case is Int64.Type: value = try cell.decode(Int64.self)
            case is Double.Type: value = try cell.decode(Double.self)
            case is Bool.Type: value = try cell.decode(Bool.self)
            case is String.Type: value = try cell.decode(String.self)
            default:
                // Anything nested (a highlight's rects) is stored as JSON text.
                return try JSONDecoder().decode(T.self, from: Data(try cell.decode(String.self).utf8))
            }
            guard let typed = value as? T else {
                throw DecodingError.typeMismatch(
                    T.self,
                    .init(
                        codingPath: [key], debugDescription: "column \(key.stringValue) holds \(Swift.type(of: value))")
                )
            }
            return typed
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            throw DecodingError.typeMismatch(
                [String: Any].self, .init(codingPath: [key], debugDescription: "nested values are stored as JSON"))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch(
                [Any].self, .init(codingPath: [key], debugDescription: "nested values are stored as JSON"))
        }
        func superDecoder() throws -> any Decoder { ColumnDecoder(row: row) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ColumnDecoder(row: row) }
    }
}
