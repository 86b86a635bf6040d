import Foundation
import GRDB
import MarginCore

extension StoreError {
    /// The error a user should see for a failure from SQLite.
    static func from(_ error: any Error, path: String?) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        let path = path ?? "(memory)"
        switch error.resultCode {
        case .SQLITE_READONLY: return StoreError.readOnly(path: path)
        case .SQLITE_FULL: return StoreError.diskFull(path: path)
        case .SQLITE_IOERR
        where error.extendedResultCode == .SQLITE_IOERR_WRITE || error.extendedResultCode == .SQLITE_IOERR_FSYNC:
            return isDiskFull(at: path)
                ? StoreError.diskFull(path: path) : StoreError.damaged(path: path, reason: "a disk write failed")
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return StoreError.damaged(path: path, reason: "not a valid SQLite database")
        case .SQLITE_BUSY, .SQLITE_LOCKED: return StoreError.busy(path: path)
        case .SQLITE_CONSTRAINT where error.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY:
            return StoreError.gone("the book")
        case .SQLITE_CANTOPEN: return StoreError.cannotOpen(path: path, reason: "SQLite cannot open the file")
        default:
            return StoreError.failed(path: path, message: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
    }
}
