import Foundation
import GRDB
import MarginCore

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
