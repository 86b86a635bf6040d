import ArgumentParser
import Foundation
import MarginCore

/// A size such as `500MB`, `2GiB` or `1.5G`, parsed once into bytes.
struct ByteSize: ExpressibleByArgument, Sendable {
    let bytes: Int64
    private let text: String

    init?(argument: String) {
        guard let bytes = parseByteSize(argument) else { return nil }
        self.init(bytes: bytes, text: argument)
    }

    private init(bytes: Int64, text: String) {
        self.bytes = bytes
        self.text = text
    }

    /// 1 GiB, the default limit on a PDF's size.
    static let oneGiB = ByteSize(bytes: 1 << 30, text: "1GiB")

    var defaultValueDescription: String { text }
}

/// Parses a size for `@Option(transform:)`, saying what is wrong with a bad one.
func byteSizeArgument(_ text: String) throws -> ByteSize {
    guard let size = ByteSize(argument: text) else {
        throw ValidationError("'\(text)' is not a size; write e.g. 500MB, 2GiB or 1.5G")
    }
    return size
}

/// Pages as `N`, `A-B` or a comma list (`1,3-5`), checked as they are parsed; checked against
/// the book's page count once the book is known.
extension PageList: ExpressibleByArgument {
    public init?(argument: String) {
        try? self.init(parsing: argument)
    }

    public var defaultValueDescription: String { text }
}

/// Parses a page list for `@Option(transform:)`, saying what is wrong with a bad one.
func pageListArgument(_ text: String) throws -> PageList {
    do {
        return try PageList(parsing: text)
    } catch {
        throw ValidationError(userMessage(for: error))
    }
}
