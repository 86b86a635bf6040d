import Foundation
import MarginCore

/// A value of a Lua table literal, as KOReader writes its sidecars (`return { ["k"] = v, … }`).
enum LuaValue: Equatable, Sendable {
    case table([(key: LuaValue, value: LuaValue)])
    case string(String)
    case number(Double)
    case boolean(Bool)
    case null

    static func == (a: LuaValue, b: LuaValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.boolean(let x), .boolean(let y)): return x == y
        case (.null, .null): return true
        case (.table(let x), .table(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The value at a string key of a table.
    subscript(key: String) -> LuaValue? {
        guard case .table(let fields) = self else { return nil }
        return fields.last { $0.key == .string(key) }?.value
    }

    /// A table's array part, in order (keys 1, 2, 3…, written or implied).
    var list: [LuaValue] {
        guard case .table(let fields) = self else { return [] }
        var numbered = [(Double, LuaValue)]()
        for field in fields { if case .number(let index) = field.key { numbered.append((index, field.value)) } }
        return numbered.sorted { $0.0 < $1.0 }.map(\.1)
    }

    var string: String? {
        switch self {
        case .string(let text): return text
        case .number(let number): return number == number.rounded() ? String(Int(number)) : String(number)
        default: return nil
        }
    }

    var number: Double? {
        if case .number(let value) = self { return value }
        if case .string(let text) = self { return Double(text) }
        return nil
    }
}

/// Reads the Lua table literal KOReader writes, and only that: comments, `return`, tables,
/// strings, numbers, booleans and nil. Anything else (a call, a name, an operator) is code, and
/// refused with where it is: the file is data, never run.
struct LuaLiteralReader {
    static let maxDepth = 64
    static let maxBytes = 16 << 20

    private let bytes: [UInt8]
    private var at = 0
    private var depth = 0
    private var line = 1

    static func read(_ data: Data, name: String) throws -> LuaValue {
        guard data.count <= maxBytes else {
            throw MarginError.invalidBackup("\(name) is \(formatBytes(Int64(data.count))): larger than any sidecar")
        }
        var reader = LuaLiteralReader(bytes: [UInt8](data))
        do {
            reader.skipSpace()
            if reader.word() == "return" {
                reader.skipSpace()
            } else {
                reader.at = 0; reader.line = 1; reader.skipSpace()
            }
            let value = try reader.value()
            reader.skipSpace()
            guard reader.at == reader.bytes.count else { throw reader.refuse("more after the table") }
            return value
        } catch let error as Refusal {
            throw MarginError.invalidBackup(
                "\(name): \(error.message) (line \(error.line)); only a table literal is read")
        }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    struct Refusal: Error {
        var message: String
        var line: Int
    }

    private func refuse(_ message: String) -> Refusal { Refusal(message: message, line: line) }

    private var current: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpace() {
        while let byte = current {
            if byte == UInt8(ascii: "\n") {
                line += 1
                at += 1
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") {
                at += 1
            } else if byte == UInt8(ascii: "-"), at + 1 < bytes.count, bytes[at + 1] == UInt8(ascii: "-") {
                at += 2
                if let level = longBracketLevel() {
                    _ = try? longString(level: level)
                } else {
                    while let next = current, next != UInt8(ascii: "\n") { at += 1 }
                }
            } else {
                return
            }
        }
    }

    /// A name at the cursor (consumed), or "" when there is none.
    private mutating func word() -> String {
        let start = at
        while let byte = current, byte == UInt8(ascii: "_") || isalnum(Int32(byte)) != 0 { at += 1 }
        return String(decoding: bytes[start..<at], as: UTF8.self)
    }

    private mutating func value() throws -> LuaValue {
        skipSpace()
        guard let byte = current else { throw refuse("the file ends where a value was expected") }
        switch byte {
        case UInt8(ascii: "{"): return try table()
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return .string(try quoted())
        case UInt8(ascii: "["):
            guard let level = longBracketLevel() else { throw refuse("'[' where a value was expected") }
            return .string(try longString(level: level))
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default:
            let start = at
            switch word() {
            case "true": return .boolean(true)
            case "false": return .boolean(false)
            case "nil": return .null
            case "": throw refuse("'\(Character(UnicodeScalar(byte)))' is not part of a table literal")
            default:
                let name = String(decoding: bytes[start..<at], as: UTF8.self)
                throw refuse("'\(name.prefix(40))' is code, not data")
            }
        }
    }

    private mutating func table() throws -> LuaValue {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw refuse("tables nested deeper than \(Self.maxDepth)") }
        at += 1
        var fields = [(key: LuaValue, value: LuaValue)]()
        var next = 1.0
        while true {
            skipSpace()
            guard let byte = current else { throw refuse("the file ends inside a table") }
            if byte == UInt8(ascii: "}") {
                at += 1
                return .table(fields)
            }
            if byte == UInt8(ascii: "["), longBracketLevel() == nil {
                at += 1
                let key = try value()
                skipSpace()
                guard current == UInt8(ascii: "]") else { throw refuse("']' expected after a key") }
                at += 1
                try expect("=")
                fields.append((key, try value()))
            } else if isalpha(Int32(byte)) != 0 || byte == UInt8(ascii: "_") {
                let start = at
                let name = word()
                skipSpace()
                if current == UInt8(ascii: "=") {
                    at += 1
                    fields.append((.string(name), try value()))
                } else {
                    at = start
                    fields.append((.number(next), try value()))
                    next += 1
                }
            } else {
                fields.append((.number(next), try value()))
                next += 1
            }
            skipSpace()
            if current == UInt8(ascii: ",") || current == UInt8(ascii: ";") {
                at += 1
            } else if current != UInt8(ascii: "}") {
                throw refuse("',' or '}' expected in a table")
            }
        }
    }

    private mutating func expect(_ character: Character) throws {
        skipSpace()
        guard let byte = current, Character(UnicodeScalar(byte)) == character else {
            throw refuse("'\(character)' expected")
        }
        at += 1
    }

    private mutating func number() throws -> Double {
        let start = at
        if current == UInt8(ascii: "-") { at += 1 }
        while let byte = current,
            isalnum(Int32(byte)) != 0 || byte == UInt8(ascii: ".")
                || ((byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+"))
                    && [UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "p"), UInt8(ascii: "P")].contains(
                        bytes[at - 1]))
        {
            at += 1
        }
        let text = String(decoding: bytes[start..<at], as: UTF8.self)
        let negative = text.hasPrefix("-")
        let body = negative ? String(text.dropFirst()) : text
        let value: Double?
        if body.lowercased().hasPrefix("0x") {
            // An integer, else a hexadecimal float ("0xA.8p1"), which strtod reads as Lua does.
            value = UInt64(body.dropFirst(2), radix: 16).map { Double($0) } ?? Double(body)
        } else {
            value = body.first.map { $0.isNumber || $0 == "." } == true ? Double(body) : nil
        }
        guard let value, value.isFinite else { throw refuse("'\(text.prefix(40))' is not a number") }
        return negative ? -value : value
    }

    /// The level of a long bracket `[==[` at the cursor (consumed), or nil when there is none.
    private mutating func longBracketLevel() -> Int? {
        guard current == UInt8(ascii: "[") else { return nil }
        var end = at + 1
        while end < bytes.count, bytes[end] == UInt8(ascii: "=") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "[") else { return nil }
        defer { at = end + 1 }
        return end - at - 1
    }

    private mutating func longString(level: Int) throws -> String {
        // A first newline is not part of the string.
        if current == UInt8(ascii: "\r") { at += 1 }
        if current == UInt8(ascii: "\n") {
            at += 1
            line += 1
        }
        let close = [UInt8(ascii: "]")] + Array(repeating: UInt8(ascii: "="), count: level) + [UInt8(ascii: "]")]
        let start = at
        while at + close.count <= bytes.count {
            if bytes[at] == close[0], Array(bytes[at..<at + close.count]) == close {
                let text = String(decoding: bytes[start..<at], as: UTF8.self)
                at += close.count
                return text
            }
            if bytes[at] == UInt8(ascii: "\n") { line += 1 }
            at += 1
        }
        throw refuse("a long string never ends")
    }

    private mutating func quoted() throws -> String {
        let quote = bytes[at]
        at += 1
        var out = [UInt8]()
        while let byte = current {
            at += 1
            if byte == quote { return String(decoding: out, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { throw refuse("a line ends inside a string") }
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            guard let escaped = current else { break }
            at += 1
            switch escaped {
            case UInt8(ascii: "n"): out.append(10)
            case UInt8(ascii: "t"): out.append(9)
            case UInt8(ascii: "r"): out.append(13)
            case UInt8(ascii: "a"): out.append(7)
            case UInt8(ascii: "b"): out.append(8)
            case UInt8(ascii: "f"): out.append(12)
            case UInt8(ascii: "v"): out.append(11)
            case UInt8(ascii: "\n"):
                out.append(10)
                line += 1
            case UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "'"): out.append(escaped)
            case UInt8(ascii: "z"):
                while let next = current, isspace(Int32(next)) != 0 {
                    if next == UInt8(ascii: "\n") { line += 1 }
                    at += 1
                }
            case UInt8(ascii: "x"):
                guard at + 2 <= bytes.count,
                    let value = UInt8(String(decoding: bytes[at..<at + 2], as: UTF8.self), radix: 16)
                else { throw refuse("a bad \\x escape") }
                out.append(value)
                at += 2
            case UInt8(ascii: "u"):
                guard current == UInt8(ascii: "{"), let end = bytes[at...].firstIndex(of: UInt8(ascii: "}")),
                    let code = UInt32(String(decoding: bytes[(at + 1)..<end], as: UTF8.self), radix: 16),
                    let scalar = Unicode.Scalar(code)
                else { throw refuse("a bad \\u escape") }
                out += Array(String(Character(scalar)).utf8)
                at = end + 1
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                var value = Int(escaped - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, let next = current, next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
                    value = value * 10 + Int(next - UInt8(ascii: "0"))
                    at += 1
                    digits += 1
                }
                guard value <= 255 else { throw refuse("a decimal escape past 255") }
                out.append(UInt8(value))
            default: throw refuse("an unknown escape \\\(Character(UnicodeScalar(escaped)))")
            }
        }
        throw refuse("a string never ends")
    }
}
