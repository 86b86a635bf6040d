import Foundation

/// Errors from opening or checking the library database.
public enum StoreError: Error, LocalizedError, Sendable {
    /// The file was written by a newer Margin; it is left untouched.
    case newerSchema(path: String)
    case cannotOpen(path: String, reason: String)

    public var errorDescription: String? {
        switch self {
        case .newerSchema(let path):
            return "the library at \(path) was written by a newer version of margin; upgrade margin to use it (the file was not touched)"
        case .cannotOpen(let path, let reason):
            return "cannot open the library at \(path): \(reason)"
        }
    }
}
