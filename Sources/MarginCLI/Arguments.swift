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

/// The limits every command that downloads takes (`add`, `fetch`, `refresh`).
struct DownloadOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Give up a download after S seconds in all (default: no limit; a server silent for 30 s is retried).",
            valueName: "S"))
    var timeout: Double?

    @Option(
        help: ArgumentHelp("Refuse PDFs larger than SIZE (e.g. 500MB, 2GiB; default 1GiB).", valueName: "SIZE"),
        transform: byteSizeArgument)
    var maxSize = ByteSize.oneGiB

    func validate() throws {
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be a number of seconds above 0") }
    }
}

/// `--shared` / `--private` on an annotation: whether the other users of a team library see it.
enum Sharing: String, EnumerableFlag {
    case shared
    case `private`

    static func help(for value: Sharing) -> ArgumentHelp? {
        switch value {
        case .shared: return "In a team library, let the other users see it (they can't change it)."
        case .private: return "In a team library, only you see it (the default for a new one)."
        }
    }

    var isShared: Bool { self == .shared }
}
