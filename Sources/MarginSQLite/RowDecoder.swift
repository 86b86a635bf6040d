import Foundation
import GRDB
import GRDBSQLite
import MarginCore

/// Decodes a model from a row as GRDB's `Decodable` records do (the same conversions:
/// `T.fromDatabaseValue` for SQLite's values, dates and UUIDs; JSON text for nested values),
/// without asking at run time which protocols each field's type conforms to. On Linux each such
/// first question scans every protocol conformance in the binary, which made decoding the first
/// rows of a command cost more than the query.
///
/// Columns are found by position: the positions of a statement's columns are worked out once
/// (`ColumnPositions`) and shared by all its rows, and strings and numbers are read straight from
/// SQLite, as GRDB's own record decoding reads them, rather than through a `DatabaseValue` copy.
struct RowDecoder: Decoder {
    let reader: RowReader
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// `columns` is the statement's, shared by its rows (decoded one after the other).
    init(row: Row, columns: ColumnCursor? = nil) {
        reader = RowReader(row: row, columns: columns ?? ColumnCursor(ColumnPositions(Array(row.columnNames))))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowContainer<Key>(reader: reader))
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

/// Where each column of a result is, by name (the leftmost of equal names; names compared
/// exactly, then without case, as GRDB compares them).
struct ColumnPositions: Sendable {
    private let exact: [String: Int]
    private let caseless: [String: Int]

    init(_ names: [String]) {
        var exact = [String: Int](minimumCapacity: names.count)
        var caseless = [String: Int](minimumCapacity: names.count)
        for (index, name) in names.enumerated() {
            if exact[name] == nil { exact[name] = index }
            let lower = name.lowercased()
            if caseless[lower] == nil { caseless[lower] = index }
        }
        self.exact = exact
        self.caseless = caseless
    }

    func callAsFunction(_ name: String) -> Int? {
        exact[name] ?? caseless[name.lowercased()]
    }
}

/// Finds the columns of the rows of one statement, decoded one after the other on one thread.
/// A model asks for its columns in the same order in every row: the order the first row asked
/// in is remembered, and a later row's question is answered by comparing its key with the one
/// expected next (equal short strings compare in one step) rather than by hashing it.
final class ColumnCursor {
    private let positions: ColumnPositions
    private var keys = [String]()
    private var found = [Int?]()
    private var learning = true
    private var next = 0

    init(_ positions: ColumnPositions) { self.positions = positions }

    func startRow() {
        if next > 0 { learning = false }
        next = 0
    }

    func callAsFunction(_ name: String) -> Int? {
        if learning {
            let position = positions(name)
            keys.append(name)
            found.append(position)
            next += 1
            return position
        }
        // Expected next, or a little further on (a NULL skipped a question this row doesn't
        // ask), or the same again (decodeIfPresent asks twice where the first row held NULL).
        var index = next
        while index < min(next + 3, keys.count) {
            if keys[index] == name {
                next = index + 1
                return found[index]
            }
            index += 1
        }
        if next > 0, keys[next - 1] == name { return found[next - 1] }
        return positions(name)
    }
}

/// The `Decodable` face of a `RowReader`: each field is read as the reader reads it.
private struct RowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let reader: RowReader
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { reader.row.columnNames.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { reader.columns(key.stringValue) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { !reader.holds(key.stringValue) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try reader.value(key.stringValue) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try reader.value(key.stringValue) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try reader.value(key.stringValue) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try reader.converted(key.stringValue) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try reader.value(key.stringValue) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reader.converted(key.stringValue) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reader.converted(key.stringValue) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reader.converted(key.stringValue) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try reader.value(key.stringValue) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reader.converted(key.stringValue) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reader.converted(key.stringValue) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try reader.converted(key.stringValue) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try reader.converted(key.stringValue) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try reader.converted(key.stringValue) }

    // Optional columns: found once and checked for NULL there (the protocol's default asks
    // `contains`, then `decodeNil`, then `decode`: three lookups of the column a field).
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try reader.optional(key.stringValue) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try reader.optional(key.stringValue)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try reader.optional(key.stringValue)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try reader.optional(key.stringValue) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try reader.optional(key.stringValue) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard reader.holds(key.stringValue) else { return nil }
        return try decode(type, forKey: key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let name = key.stringValue
        // Casts to a concrete type: no protocol conformance is looked up.
        if T.self == Date.self, let date = try reader.date(name) as? T { return date }
        if T.self == UUID.self, let uuid = try reader.uuid(name) as? T { return uuid }
        if T.self == Data.self, let data = try reader.converted(name) as Data as? T { return data }
        if T.self == [String].self, let strings = try reader.strings(name) as? T { return strings }
        // Anything else was stored as JSON text, as GRDB stores nested values.
        let text: String = try reader.value(name)
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

    func superDecoder() throws -> any Decoder { RowDecoder(row: reader.row) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: reader.row) }
}

/// "YYYY-MM-DD HH:MM:SS" with an optional ".SSS", in UTC; nil for anything else.
func parseStoredDate(_ text: String) -> Date? {
    var text = text
    // A native string's bytes, read in place (no array made a date).
    return text.withUTF8 { parseStoredDate(bytes: $0) }
}

private func parseStoredDate(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
    guard bytes.count == 19 || bytes.count == 23 else { return nil }
    func number(_ start: Int, _ length: Int) -> Int? {
        var value = 0
        for index in start..<start + length {
            let digit = Int(bytes[index]) - 48
            guard digit >= 0 && digit <= 9 else { return nil }
            value = value * 10 + digit
        }
        return value
    }
    guard bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x20, bytes[13] == 0x3A, bytes[16] == 0x3A,
        let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
        let minute = number(14, 2), let second = number(17, 2), (1...12).contains(month), (1...31).contains(day),
        hour < 24, minute < 60, second < 61
    else { return nil }
    var milliseconds = 0
    if bytes.count == 23 {
        guard bytes[19] == 0x2E, let value = number(20, 3) else { return nil }
        milliseconds = value
    }
    // Days from 1970-01-01 to the civil date (H. Hinnant's algorithm, proleptic Gregorian).
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
    return Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1_000)
}

/// A model read from a row column by column rather than through `Decodable`. The generic
/// decoding path asks the runtime for metadata (`Optional<T>`, the container box) and casts at
/// every field: 42,000 instructions a book, over a quarter of `list`'s. Only the models read in
/// bulk (`Book`, and a listing's `Source` and `Tag`) read themselves; the others decode with
/// `RowDecoder`, to the same values.
protocol RowReadable {
    init(reading row: RowReader) throws
}

/// One row's columns by name (found by `ColumnCursor`), converted as GRDB's records convert
/// them: strings and numbers read straight from SQLite, dates and UUIDs in their stored forms
/// first, anything else through `fromDatabaseValue`; a NULL where a value is required is an
/// error. `RowDecoder` reads through it too.
struct RowReader {
    let row: Row
    let columns: ColumnCursor
    /// The statement whose current row `row` is (a cursor's row), for dates and UUIDs read from
    /// their bytes in place (a date's text is not made a `String` first). Nil for a copied row,
    /// read through GRDB. Strings are GRDB's to read: its `String(cString:)` costs no more.
    let statement: SQLiteStatement?

    init(row: Row, columns: ColumnCursor, statement: SQLiteStatement? = nil) {
        self.row = row
        self.columns = columns
        self.statement = statement
        columns.startRow()
    }

    /// The bytes of a TEXT (or BLOB) column of the statement's current row, in place: valid until
    /// the statement moves on. Nil without a statement or for a value of another type.
    private func bytes(_ index: Int, blob: Bool = false) -> UnsafeRawBufferPointer? {
        guard let statement else { return nil }
        let column = Int32(index)
        guard sqlite3_column_type(statement, column) == (blob ? SQLITE_BLOB : SQLITE_TEXT) else { return nil }
        // The pointer first, then its length (SQLite's documented order).
        let start =
            blob
            ? sqlite3_column_blob(statement, column) : UnsafeRawPointer(sqlite3_column_text(statement, column))
        return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(statement, column)))
    }

    /// Whether the column is there and not NULL.
    func holds(_ name: String) -> Bool {
        guard let index = columns(name) else { return false }
        return !row.hasNull(atIndex: index)
    }

    private func index(_ name: String) throws -> Int {
        guard let index = columns(name) else {
            throw DecodingError.keyNotFound(
                ColumnKey(stringValue: name), .init(codingPath: [], debugDescription: "no column \(name)"))
        }
        return index
    }

    /// A string or number.
    func value<T: DatabaseValueConvertible & StatementColumnConvertible>(_ name: String) throws -> T {
        try row.decode(T.self, atIndex: index(name))
    }

    /// A string or number, nil for NULL (or no such column).
    func optional<T: DatabaseValueConvertible & StatementColumnConvertible>(_ name: String) throws -> T? {
        guard let index = columns(name), !row.hasNull(atIndex: index) else { return nil }
        return try row.decode(T.self, atIndex: index)
    }

    /// GRDB stores dates as UTC text, "2026-11-22 05:12:38.476": read here directly (GRDB's
    /// parser goes through a calendar, tens of thousands of instructions a date); any other form
    /// through GRDB.
    func date(_ name: String) throws -> Date {
        let index = try index(name)
        if statement != nil {
            if let bytes = bytes(index), let date = parseStoredDate(bytes: bytes.assumingMemoryBound(to: UInt8.self)) {
                return date
            }
        } else if !row.hasNull(atIndex: index),
            let date = parseStoredDate(try row.decode(String.self, atIndex: index))
        {
            return date
        }
        return try converted(index, name)
    }

    func optionalDate(_ name: String) throws -> Date? {
        guard let index = columns(name), !row.hasNull(atIndex: index) else { return nil }
        return try date(name)
    }

    func uuid(_ name: String) throws -> UUID {
        let index = try index(name)
        // Stored as GRDB stores a UUID: 16 bytes, read in place; any other form through GRDB.
        if statement != nil {
            if let bytes = bytes(index, blob: true), bytes.count == 16 {
                return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
            }
        } else if let data = row.dataNoCopy(atIndex: index), data.count == 16 {
            return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        }
        return try converted(index, name)
    }

    /// A list of strings stored as JSON text, as GRDB stores nested values.
    func strings(_ name: String) throws -> [String] {
        let text: String = try value(name)
        if text == "[]" { return [] }
        return try JSONDecoder().decode([String].self, from: Data(text.utf8))
    }

    /// Any value GRDB converts (`fromDatabaseValue`).
    func converted<T: DatabaseValueConvertible>(_ name: String) throws -> T {
        try converted(try index(name), name)
    }

    private func converted<T: DatabaseValueConvertible>(_ index: Int, _ name: String) throws -> T {
        let stored = row[index] as DatabaseValue
        guard let value = T.fromDatabaseValue(stored) else {
            throw DecodingError.valueNotFound(
                T.self,
                .init(codingPath: [ColumnKey(stringValue: name)], debugDescription: "column \(name) holds \(stored)"))
        }
        return value
    }
}

private struct ColumnKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Book: RowReadable {
    init(reading row: RowReader) throws {
        self.init(
            sha256: try row.value("sha256"), title: try row.value("title"), author: try row.optional("author"),
            pages: try row.value("pages"), bytes: try row.value("bytes"), folder: try row.optional("folder"),
            password: try row.optional("password"), now: try row.date("addedAt"), uuid: try row.uuid("uuid"))
        id = try row.optional("id")
        memo = try row.optional("memo")
        updatedAt = try row.date("updatedAt")
        openedAt = try row.optionalDate("openedAt")
        textlessPages = try row.value("textlessPages")
        ocrPages = try row.value("ocrPages")
        ocrConfidence = try row.optional("ocrConfidence")
        indexedAt = try row.optionalDate("indexedAt")
        addedBy = try row.optional("addedBy")
        doi = try row.optional("doi")
        arxiv = try row.optional("arxiv")
        year = try row.optional("year")
        citationKey = try row.optional("citationKey")
        venue = try row.optional("venue")
        publisher = try row.optional("publisher")
        userFields = try row.strings("userFields")
        workType = try row.optional("workType")
        lang = try row.optional("lang")
        yearSource = try row.optional("yearSource")
    }
}

extension Source: RowReadable {
    init(reading row: RowReader) throws {
        self.init(
            bookId: try row.value("bookId"), url: try row.value("url"), etag: try row.optional("etag"),
            lastModified: try row.optional("lastModified"), now: try row.date("addedAt"), uuid: try row.uuid("uuid"))
        id = try row.optional("id")
        updatedAt = try row.date("updatedAt")
        checkedAt = try row.optionalDate("checkedAt")
    }
}

extension Tag: RowReadable {
    init(reading row: RowReader) throws {
        self.init(
            bookId: try row.value("bookId"), name: try row.value("name"), now: try row.date("createdAt"),
            uuid: try row.uuid("uuid"))
        id = try row.optional("id")
    }
}
