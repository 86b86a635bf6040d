import Foundation
import GRDB

/// The schema state of a library database.
public struct SchemaStatus: Sendable, Encodable {
    /// Migrations applied (the schema version).
    public var version: Int
    /// The version this build of margin writes.
    public var latest: Int
    public var applied: [String]
    public var pending: [String]
}

/// What an integrity check of the database found.
public struct IntegrityReport: Sendable, Encodable {
    /// `PRAGMA integrity_check` lines; `["ok"]` when healthy.
    public var integrity: [String]
    /// Rows whose foreign key points at nothing, as "table rowid → parent".
    public var foreignKeyViolations: [String]
    public var ok: Bool { integrity == ["ok"] && foreignKeyViolations.isEmpty }
}

extension LibraryDatabase {
    public func schemaStatus() throws -> SchemaStatus {
        let applied = try writer.read { db in try Schema.migrator.appliedIdentifiers(db) }
        let known = Schema.identifiers
        return SchemaStatus(
            version: applied.count, latest: known.count,
            applied: known.filter(applied.contains), pending: known.filter { !applied.contains($0) })
    }

    public func integrityReport() throws -> IntegrityReport {
        try writer.read { db in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            let violations = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").map { row -> String in
                let table: String = row[0]
                let rowid: Int64? = row[1]
                let parent: String = row[2]
                return "\(table) row \(rowid.map(String.init) ?? "?") → missing \(parent)"
            }
            return IntegrityReport(integrity: integrity, foreignKeyViolations: violations)
        }
    }
}
