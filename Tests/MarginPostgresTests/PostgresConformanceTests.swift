import Foundation
import MarginCore
import MarginPostgres
import StoreConformance
import TestSupport
import Testing

/// The PostgreSQL store passes every store conformance check the SQLite store passes, each on
/// a database of its own.
@Suite struct PostgresConformanceTests {
    @Test(
        .enabled(if: TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"),
        arguments: StoreConformance.names)
    func onAFreshDatabase(_ check: String) async throws {
        try await StoreConformance.run(check, on: try PostgresLibraryDatabase(url: try TestCluster.freshDatabase()))
    }

    /// Opening twice applies the migrations once; the status says what is applied.
    @Test(.enabled(if: TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theSchemaIsMigratedOnce() throws {
        let url = try TestCluster.freshDatabase()
        let first = try PostgresLibraryDatabase(url: url).schemaStatus()
        let second = try PostgresLibraryDatabase(url: url).schemaStatus()
        #expect(first.pending.isEmpty && first.version == first.latest)
        #expect(second.applied == first.applied)
    }
}
