import Foundation

/// Errors a user can meet in MarginKit. The first line of each message says what happened; any
/// further lines are hints (candidates, what to do).
public enum MarginError: Error, LocalizedError, Sendable {
    // Selecting books
    case bookNotFound(String)
    case ambiguousBook(String, candidates: [String])
    case emptyLibrary

    // Inputs
    case noSuchFile(String)
    case isDirectory(String)
    case unsupportedScheme(String)
    case invalidURL(String)

    // Downloads
    case unreachable(url: String, reason: String)
    case httpStatus(url: String, code: Int, reason: String)
    case tooLarge(url: String, limit: Int64, size: Int64?)
    case incompleteDownload(url: String, expected: Int64, received: Int64)
    case timedOut(url: String, seconds: Double)
    case stalled(url: String, bytes: Int64, seconds: Double)
    case untrustedTLS(url: String, reason: String)
    /// A metadata service (Crossref, arXiv) could not say what a work is.
    case lookupFailed(service: String, reason: String)

    // Content
    case emptyFile(String)
    case htmlNotPDF(String)
    case notPDF(String)
    case truncatedPDF(String)
    case encrypted(String)
    case wrongPassword(String)
    /// A stored password can't be unsealed (its key file is gone).
    case passwordUnavailable(title: String, keyFile: String)
    /// A team library's encrypted PDF whose password this user has not given on this machine.
    case passwordNotKept(title: String)
    /// A book's encrypted PDF with no password stored for it (a library restored from a backup,
    /// which carries none).
    case passwordNotStored(title: String, book: Int64)
    case unreadablePDF(String, reason: String)
    /// Poppler exceeded its time or memory limit on a PDF.
    case popplerLimit(String)
    /// Work that has a time limit (a search in the server) ran past it.
    case timeLimit(String)
    /// A command that only reads, on a folder that holds no library.
    case noLibrary(folder: String)

    // Cache
    case notCached(title: String, reason: String)
    /// A command that only reads met a book whose PDF is not in the cache (it never fetches).
    case fileNotCached(title: String, book: Int64)
    /// Bytes stored under a SHA-256 that don't hash to it (`title` once the book is known).
    case corruptStoredFile(sha256: String, found: String, title: String? = nil)

    // Annotations and removal
    /// Removing a book would delete its annotations, and that wasn't confirmed.
    case removalNeedsConfirmation(title: String, highlights: Int, memos: Int, bookmarks: Int)
    /// No bookmark, highlight or memo (`kind`) has this id.
    case annotationNotFound(kind: String, id: Int64)
    /// A team library's book other users annotated: removing it would remove their work.
    case annotatedByOthers(title: String)
    /// Another user's annotation in a team library: only its author changes it.
    case notYours(kind: String, id: Int64, owner: String)
    /// The passage is highlighted already (by highlight `id`).
    case alreadyHighlighted(text: String, page: Int, id: Int64)
    /// A book with no source left to fetch its PDF from.
    case noSource(title: String)

    // Inputs the use cases check
    /// A file would be overwritten, and that wasn't asked for.
    case fileExists(String)
    /// A search query with nothing to search for (empty, or only quotes and spaces).
    case emptyQuery(noWords: Bool)
    /// A backup that can't be imported, and why; nothing was imported.
    case invalidBackup(String)

    /// A page outside the book's `1...count`.
    case pageOutOfRange(page: Int, count: Int)

    // Everything else
    case invalidArgument(String)
    case io(String)

    /// What happened, in words a user can act on. The library knows no command line: what to
    /// type about an error (an option, a command) is the front end's to add.
    public var errorDescription: String? {
        switch redacted {
        case .bookNotFound(let selector):
            return "no book matches '\(selector)'"
        case .ambiguousBook(let selector, let candidates):
            return "'\(selector)' matches \(candidates.count) books; be more specific or use the id:\n"
                + candidates.map { "  \($0)" }.joined(separator: "\n")
        case .emptyLibrary:
            return "the library is empty"
        case .noSuchFile(let path):
            return "no such file: \(path)"
        case .isDirectory(let path):
            return "\(path) is a folder, not a PDF file"
        case .unsupportedScheme(let input):
            return "unsupported URL scheme in \(input): margin adds http://, https:// and file:// URLs, and local paths"
        case .invalidURL(let input):
            return "not a valid URL: \(input)"
        case .unreachable(let url, let reason):
            return "cannot reach \(url): \(reason)"
        case .httpStatus(let url, let code, let reason):
            return "the server answered \(code) \(reason) for \(url)"
        case .lookupFailed(let service, let reason):
            return "\(service) lookup failed: \(reason)"
        case .tooLarge(let url, let limit, let size):
            let sizeText = size.map { " (\(formatBytes($0)))" } ?? " (more than that was read)"
            return "\(url) is larger than the limit of \(formatBytes(limit))\(sizeText)"
        case .incompleteDownload(let url, let expected, let received):
            return "the download of \(url) was cut short: received \(received) of \(expected) bytes"
        case .timedOut(let url, let seconds):
            return "the download of \(url) took longer than its time limit of \(Int(seconds)) s; nothing was added "
                + "(run it again to resume)"
        case .stalled(let url, let bytes, let seconds):
            return
                "the download of \(url) stalled: the server sent \(bytes) bytes in \(Int(seconds)) s (less than 1 KiB/s); nothing was added "
                + "(what arrived is kept: run it again to resume)"
        case .untrustedTLS(let url, let reason):
            return "cannot reach \(url) securely: \(reason); nothing was downloaded"
        case .emptyFile(let input):
            return "\(input) is empty (0 bytes), not a PDF"
        case .htmlNotPDF(let input):
            return "not a PDF: \(input) is an HTML page, not a PDF (a landing or login page?)"
        case .notPDF(let input):
            return "not a PDF: \(input) does not start with %PDF-"
        case .truncatedPDF(let input):
            return "the PDF \(input) is truncated: it ends without %%EOF; download or copy it again"
        case .encrypted(let input):
            return "\(input) is an encrypted PDF and no password for it was given"
        case .wrongPassword(let input):
            return "the password given does not open the encrypted PDF \(input)"
        case .popplerLimit(let reason):
            return "\(reason); nothing was changed"
        case .passwordUnavailable(let title, let keyFile):
            return "the stored password of '\(title)' can't be read: its key (\(keyFile)) is missing or was replaced"
        case .passwordNotStored(let title, _):
            return
                "'\(title)' is an encrypted PDF and no password for it is stored in this library (backups carry none)"
        case .passwordNotKept(let title):
            return "'\(title)' is encrypted and its password is not on this machine (a team library keeps no passwords)"
        case .unreadablePDF(let input, let reason):
            return "poppler cannot read \(input) as a PDF: \(reason)"
        case .notCached(let title, let reason):
            return "'\(title)' is not cached and no source could be fetched: \(reason)"
        case .timeLimit(let message):
            return message
        case .noLibrary(let folder):
            return
                "there is no library in \(folder) (a mistyped --library or MARGIN_HOME?); nothing was created there. "
                + "'margin add PDF' or 'margin import BACKUP' makes one"
        case .corruptStoredFile(let sha256, let found, let title):
            let what = title.map { "the PDF of '\($0)'" } ?? "the stored file \(sha256.prefix(12))"
            return "\(what) in the library does not match its SHA-256 (expected \(sha256.prefix(12))…, "
                + "found \(found.prefix(12))…): it was not used; whoever has the right PDF can add it again"
        case .fileNotCached(let title, _):
            return "the PDF of '\(title)' is not in the cache (this command reads only what is there)"
        case .removalNeedsConfirmation(let title, let highlights, let memos, let bookmarks):
            return "'\(title)' has \(count(highlights, "highlight")), \(count(memos, "memo")) and "
                + "\(count(bookmarks, "bookmark")), which removing it would delete; nothing was removed"
        case .annotatedByOthers(let title):
            return "'\(title)' has other users' annotations: only the library's owner can remove it"
        case .notYours(let kind, let id, let owner):
            return "\(kind) \(id) is \(owner)'s: only its author can change or remove it"
        case .annotationNotFound(let kind, let id):
            return "no \(kind) with id \(id)"
        case .alreadyHighlighted(let text, let page, let id):
            return "'\(text)' on page \(page) is already highlighted (highlight \(id))"
        case .noSource(let title):
            return "'\(title)' is not cached and has no source to fetch it from"
        case .fileExists(let path):
            return "\(path) already exists"
        case .emptyQuery(let noWords):
            return noWords ? "the search query has no words (only quotes or spaces)" : "the search query is empty"
        case .invalidBackup(let message):
            return "\(message); nothing was imported"
        case .pageOutOfRange(let page, let count):
            return count == 1
                ? "page \(page) is out of range: the book has 1 page"
                : "page \(page) is out of range: valid pages are 1-\(count)"
        case .invalidArgument(let message), .io(let message):
            return message
        }
    }
}

extension MarginError {
    /// The error with any URL in it fit to print (see `redactedURL`).
    var redacted: MarginError {
        switch self {
        case .unreachable(let url, let reason): return .unreachable(url: redactedURL(url), reason: reason)
        case .httpStatus(let url, let code, let reason):
            return .httpStatus(url: redactedURL(url), code: code, reason: reason)
        case .tooLarge(let url, let limit, let size): return .tooLarge(url: redactedURL(url), limit: limit, size: size)
        case .incompleteDownload(let url, let expected, let received):
            return .incompleteDownload(url: redactedURL(url), expected: expected, received: received)
        case .timedOut(let url, let seconds): return .timedOut(url: redactedURL(url), seconds: seconds)
        case .stalled(let url, let bytes, let seconds):
            return .stalled(url: redactedURL(url), bytes: bytes, seconds: seconds)
        case .untrustedTLS(let url, let reason): return .untrustedTLS(url: redactedURL(url), reason: reason)
        case .emptyFile(let input): return .emptyFile(redactedURL(input))
        case .htmlNotPDF(let input): return .htmlNotPDF(redactedURL(input))
        case .notPDF(let input): return .notPDF(redactedURL(input))
        case .truncatedPDF(let input): return .truncatedPDF(redactedURL(input))
        case .encrypted(let input): return .encrypted(redactedURL(input))
        case .wrongPassword(let input): return .wrongPassword(redactedURL(input))
        case .unreadablePDF(let input, let reason): return .unreadablePDF(redactedURL(input), reason: reason)
        case .invalidURL(let input): return .invalidURL(redactedURL(input))
        case .unsupportedScheme(let input): return .unsupportedScheme(redactedURL(input))
        default: return self
        }
    }
}

/// "1.5 MB"-style sizes for messages.
public func formatBytes(_ bytes: Int64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024, unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) bytes" : "\(String(format: "%.1f", value)) \(units[unit])"
}

/// "1 page", "3 pages"; `plural` for irregular words ("copy", "copies").
public func count(_ number: Int, _ noun: String, plural: String? = nil) -> String {
    number == 1 ? "1 \(noun)" : "\(number) \(plural ?? noun + "s")"
}
