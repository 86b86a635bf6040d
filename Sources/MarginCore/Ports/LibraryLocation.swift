import Foundation

/// Where a library is, as `--library`, `MARGIN_LIBRARY` or `MARGIN_HOME` name it: parsed once.
///
/// A folder holds a personal library (its SQLite database and cache); a URL names a library on
/// a server, opened by the backend that registered the URL's scheme (`LibraryBackend`).
public enum LibraryLocation: Sendable, Equatable {
    /// A folder (absolute path): `DIR`, or `sqlite://DIR`.
    case folder(String)
    /// A server's URL, its scheme lowercased (`postgres`).
    case server(scheme: String, url: String)

    /// `text` as a location: a folder unless it starts with a URL scheme (`name://`); a scheme
    /// no backend of `schemes` registered is an error, never a folder named after it.
    public init(parsing text: String, schemes: Set<String>) throws {
        if let range = Self.schemeRange(text) {
            let scheme = text[range].dropLast(3).lowercased()
            if scheme == "sqlite" || scheme == "file" {
                self = .folder(absolutePath(String(text[range.upperBound...])))
                return
            }
            guard schemes.contains(scheme) else {
                throw MarginError.invalidArgument(
                    "'\(text)' is not a library margin can open: give a folder, sqlite://FOLDER"
                        + (schemes.isEmpty ? "" : " or " + schemes.sorted().map { "\($0)://…" }.joined(separator: ", "))
                )
            }
            self = .server(scheme: scheme, url: text)
            return
        }
        self = .folder(absolutePath(text))
    }

    /// Where `text` starts with a URL scheme and `://`: a letter, then letters, digits, `+`,
    /// `.` or `-` (RFC 3986), in ASCII. (Read without a regular expression: Foundation's loads
    /// ICU's, 4 ms of every command on a team library, which asks twice.)
    public static func schemeRange(_ text: String) -> Range<String.Index>? {
        guard let end = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<end.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) })
        else { return nil }
        return text.startIndex..<end.upperBound
    }

    /// The URL scheme `text` starts with, lowercased, if it is a server's (not `sqlite://` or
    /// `file://`, which name folders).
    public static func serverScheme(of text: String) -> String? {
        guard let range = schemeRange(text) else { return nil }
        let scheme = text[range].dropLast(3).lowercased()
        return scheme == "sqlite" || scheme == "file" ? nil : scheme
    }

    /// Whether the library is on a server (shared), not in a folder of this machine.
    public var isServer: Bool {
        if case .server = self { return true }
        return false
    }
}

/// A backend for libraries on a server: the URL schemes it opens and how. A new backend is a
/// target of its own and one line registering its `LibraryBackend` in `margin-full`'s main.
public struct LibraryBackend: Sendable {
    /// The URL schemes it answers (`postgres`, `postgresql`).
    public var schemes: [String]
    /// Opens the library at a URL: the password from the environment (if any), and whether
    /// the annotations other users shared are shown too.
    public var open: @Sendable (_ url: String, _ password: String?, _ sharedToo: Bool) throws -> any LibraryStore

    public init(
        schemes: [String],
        open: @escaping @Sendable (_ url: String, _ password: String?, _ sharedToo: Bool) throws -> any LibraryStore
    ) {
        self.schemes = schemes
        self.open = open
    }
}
