/// JSON written straight as bytes, exactly as Foundation's `JSONEncoder` writes it with
/// `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]` (Margin's `--json`): two spaces an
/// level, `"key" : value`, an empty array as `[`, a blank line and `]`, and in strings `"`, `\`
/// and the control characters escaped (`\b \t \n \f \r`, the rest `\u00xx`), everything else as
/// it is. For the hot views only (a listing of books): the encoder asks the runtime about every
/// value's type and builds a tree before it writes, about 230,000 instructions a book.
///
/// The writer does not sort: a view writes its keys in byte order, and a test holds its output to
/// the encoder's for the same value. `compact`: as the encoder writes without `.prettyPrinted`
/// (`serve`'s answers): no line breaks, no spaces, `"key":value`.
public struct PrettyJSON {
    public private(set) var bytes: [UInt8] = []
    private var depth = 0
    /// A value was written at this level already: the next one is preceded by a comma.
    private var continues = false
    private let compact: Bool

    public init(capacity: Int = 0, compact: Bool = false) {
        bytes.reserveCapacity(capacity)
        self.compact = compact
    }

    /// The document as a string.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Containers

    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }

    /// Starts an element of the array being written: a value or container follows.
    public mutating func element() {
        separate()
    }

    /// Starts a member of the object being written: a value or container follows.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        append(name)
        bytes.append(UInt8(ascii: "\""))
        if compact {
            bytes.append(UInt8(ascii: ":"))
        } else {
            bytes.append(0x20)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(0x20)
        }
    }

    // MARK: Values

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
        continues = true
    }

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    public mutating func integer(_ value: Int64) {
        bytes.append(contentsOf: String(value).utf8)
        continues = true
    }

    public mutating func integer(_ value: Int) {
        integer(Int64(value))
    }

    public mutating func integer(_ value: Int?) {
        if let value { integer(Int64(value)) } else { null() }
    }

    /// A finite number as `JSONEncoder` writes it: a whole one without a fraction ("87"),
    /// another in Swift's shortest form ("87.5").
    public mutating func number(_ value: Double?) {
        guard let value, value.isFinite else { return null() }
        if value == value.rounded(), abs(value) < 1e15 {
            integer(Int64(value))
        } else {
            bytes.append(contentsOf: "\(value)".utf8)
            continues = true
        }
    }

    public mutating func bool(_ value: Bool) {
        append(value ? "true" : "false")
        continues = true
    }

    public mutating func null() {
        append("null")
        continues = true
    }

    /// An array of `items`, each written by `write`, as a document of its own.
    public static func array<Item>(
        _ items: [Item], bytesEach: Int, compact: Bool = false, _ write: (inout PrettyJSON, Item) -> Void
    ) -> PrettyJSON {
        var json = PrettyJSON(capacity: 64 + items.count * bytesEach, compact: compact)
        json.beginArray()
        for item in items {
            json.element()
            write(&json, item)
        }
        json.endArray()
        return json
    }

    /// An array of strings.
    public mutating func strings(_ values: [String]) {
        beginArray()
        for value in values {
            element()
            string(value)
        }
        endArray()
    }

    // MARK: Layout

    private mutating func open(_ bracket: UInt8) {
        bytes.append(bracket)
        if !compact { bytes.append(0x0A) }
        depth += 1
        continues = false
    }

    private mutating func close(_ bracket: UInt8) {
        depth -= 1
        if !compact {
            bytes.append(0x0A)
            indent()
        }
        bytes.append(bracket)
        continues = true
    }

    // Byte by byte: appending a buffer costs more than the few bytes it would save.
    private mutating func separate() {
        if continues { bytes.append(UInt8(ascii: ",")) }
        guard !compact else { return }
        if continues { bytes.append(0x0A) }
        indent()
    }

    private mutating func indent() {
        for _ in 0..<depth * 2 { bytes.append(0x20) }
    }

    /// Array literals of bytes would be allocated at each call.
    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            append("u00")
            appendHex(byte, to: &bytes)
        }
    }
}
