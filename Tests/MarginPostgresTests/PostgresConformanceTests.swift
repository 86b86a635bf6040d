import Foundation
import MarginCore
import MarginPostgres
import StoreConformance
import TestSupport
import Testing

/// The throwaway PostgreSQL cluster `scripts/with-postgres.sh` starts for the test run.
enum TestCluster {
    /// Its URL (MARGIN_TEST_POSTGRES), or nil when the tests run without one.
    static let url = ProcessInfo.processInfo.environment["MARGIN_TEST_POSTGRES"]
    static var available: Bool { url != nil && psql != nil }
    static let psql = ["/usr/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A new, empty database in the cluster, for one test: its URL.
    static func freshDatabase() throws -> String {
        guard let url, let psql else { throw ClusterError.absent }
        let name = "margin_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: psql)
        process.arguments = [url, "-q", "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(name)"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ClusterError.createFailed(name) }
        var components = URLComponents(string: url)
        components?.path = "/" + name
        return components?.string ?? url
    }

    enum ClusterError: Error { case absent, createFailed(String) }
}

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
