import Foundation

/// The throwaway PostgreSQL cluster `scripts/with-postgres.sh` starts for the test run.
public enum TestCluster {
    /// Its URL (MARGIN_TEST_POSTGRES), or nil when the tests run without one.
    public static let url = ProcessInfo.processInfo.environment["MARGIN_TEST_POSTGRES"]
    public static var available: Bool { url != nil && psql != nil }
    static let psql = ["/usr/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A new, empty database in the cluster, for one test: its URL.
    public static func freshDatabase() throws -> String {
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

    public enum ClusterError: Error { case absent, createFailed(String) }
}
