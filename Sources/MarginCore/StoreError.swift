import Foundation

/// Errors from the library database, in words a user can act on (never raw SQL).
public enum StoreError: Error, LocalizedError, Sendable {
    /// The file was written by a newer Margin; it is left untouched.
    case newerSchema(path: String)
    case cannotOpen(path: String, reason: String)
    /// The file is shorter than its header says: part of it is lost.
    case truncated(path: String, bytes: Int64, expected: Int64)
    case readOnly(path: String)
    case diskFull(path: String)
    case damaged(path: String, reason: String)
    /// What a write referred to was removed meanwhile (by another process).
    case gone(String)
    case busy(path: String)
    case failed(path: String, message: String)
    /// The database server can't be reached, or the connection to it was lost mid-way: nothing
    /// was changed (an open transaction is rolled back by the server).
    case unreachable(path: String, reason: String)

    public var errorDescription: String? {
        switch self {
        case .newerSchema(let path):
            return
                "the library at \(path) was written by a newer version of margin; upgrade margin to use it (the file was not touched)"
        case .cannotOpen(let path, let reason):
            return "cannot open the library at \(path): \(reason)"
        case .truncated(let path, let bytes, let expected):
            return "the library database \(path) is truncated (\(bytes) of \(expected) bytes); restore it from a copy "
                + "(\((path as NSString).lastPathComponent).bak-N beside it, or a JSON export imported into a new library) "
                + "or move it aside to start anew"
        case .readOnly(let path):
            return
                "the library at \(path) is read-only; reading works, but this command writes (check the folder's permissions)"
        case .diskFull(let path):
            return
                "cannot write the library at \(path): the disk is full; free some space and run the command again (nothing was changed)"
        case .damaged(let path, let reason):
            return "the library database \(path) is damaged (\(reason)); restore it from a copy"
        case .gone(let what):
            return "\(what) was removed meanwhile (by another margin process?); nothing was changed"
        case .busy(let path):
            return "the library at \(path) is busy: another margin process held it for 30 seconds; try again"
        case .failed(let path, let message):
            return "the library database \(path) refused the change (\(message)); nothing was changed"
        case .unreachable(let path, let reason):
            return
                "the library database \(path) can't be reached (\(reason)); nothing was changed: try again when it answers"
        }
    }
}
