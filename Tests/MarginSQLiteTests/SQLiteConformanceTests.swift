import Foundation
import MarginCore
import MarginSQLite
import StoreConformance
import TestSupport
import Testing

/// The SQLite store passes every store conformance check, in memory and in a file.
@Suite struct SQLiteConformanceTests {
    @Test(arguments: StoreConformance.names)
    func inMemory(_ check: String) async throws {
        try await StoreConformance.run(check, on: try LibraryDatabase())
    }

    @Test(arguments: StoreConformance.names)
    func inAFile(_ check: String) async throws {
        let folder = TemporaryFolder()
        try await StoreConformance.run(check, on: try LibraryDatabase(path: folder.path + "/library.sqlite"))
    }
}
