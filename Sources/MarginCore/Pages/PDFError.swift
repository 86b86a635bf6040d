import Foundation

/// Errors raised by the PDF engine (`PDFEngine`). Messages say what happened and what to do.
public enum PDFError: Error, LocalizedError, Equatable, Sendable {
    /// The file is encrypted and no password was given.
    case passwordRequired
    /// The file is encrypted and the given password does not open it.
    case wrongPassword
    /// The engine could not read the file as a PDF; carries its own message.
    case unreadable(String)
    /// A 1-based page number outside `1...count`.
    case pageOutOfRange(page: Int, count: Int)
    /// The engine could not load a page that exists (a damaged page tree).
    case pageUnreadable(page: Int)
    /// Drawing or writing a page failed.
    case renderFailed(String)
    /// Writing a document failed.
    case saveFailed(String)
    /// The engine could not be loaded (not installed, or too old).
    case libraryMissing(String)

    public var errorDescription: String? {
        switch self {
        case .passwordRequired:
            return "the PDF is encrypted and no password for it is known"
        case .wrongPassword:
            return "the PDF is encrypted and the password given does not open it"
        case .unreadable(let message):
            return "not a readable PDF: \(message)"
        case .pageOutOfRange(let page, let count):
            return count == 1
                ? "page \(page) is out of range: the book has 1 page"
                : "page \(page) is out of range: valid pages are 1-\(count)"
        case .pageUnreadable(let page):
            return "page \(page) is damaged: poppler cannot read it"
        case .renderFailed(let message):
            return "could not render the page: \(message)"
        case .saveFailed(let message):
            return "could not write the PDF: \(message)"
        case .libraryMissing(let message):
            return message
        }
    }
}
