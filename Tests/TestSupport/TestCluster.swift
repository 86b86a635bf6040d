import Foundation

/// The throwaway PostgreSQL cluster `scripts/with-postgres.sh` starts for the test run.
public enum TestCluster {
    /// Its URL (MARGIN_TEST_POSTGRES), or nil when the tests run without one.
    public static let url = ProcessInfo.processInfo.environment["MARGIN_TEST_POSTGRES"]
    public static var available: Bool { url != nil && psql != nil }
    static let psql = ["/usr/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The same cluster through its Unix-domain socket (MARGIN_TEST_POSTGRES_SOCKET).
    public static let socketURL = ProcessInfo.processInfo.environment["MARGIN_TEST_POSTGRES_SOCKET"]

    /// `url`'s database through the socket.
    public static func overSocket(_ url: String) -> String? {
        guard let socketURL, var components = URLComponents(string: socketURL) else { return nil }
        components.path = URLComponents(string: url)?.path ?? components.path
        return components.string
    }

    /// A new, empty database in the cluster, for one test: its URL.
    public static func freshDatabase() throws -> String {
        guard let url, let psql else { throw ClusterError.absent }
        let name = "margin_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))"
        let created = try runProcess(psql, [url, "-q", "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(name)"])
        guard created.status == 0 else { throw ClusterError.createFailed(name) }
        var components = URLComponents(string: url)
        components?.path = "/" + name
        return components?.string ?? url
    }

    /// Runs SQL with psql at `url` (unaligned, tuples only) and returns what it printed, or
    /// throws with psql's error.
    @discardableResult
    public static func psql(_ url: String, _ sql: String) throws -> String {
        guard let psql else { throw ClusterError.absent }
        let result = try runProcess(psql, [url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard result.status == 0 else { throw ClusterError.psqlFailed(result.stderr) }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `psql`, the SQL read from a file (for statements too long for a command's argument).
    @discardableResult
    public static func psqlFile(_ url: String, _ sql: String) throws -> String {
        guard let psql else { throw ClusterError.absent }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("margin-\(UUID().uuidString).sql")
        try Data(sql.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try runProcess(psql, [url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", file.path])
        guard result.status == 0 else { throw ClusterError.psqlFailed(result.stderr) }
        return result.stdout
    }

    /// A new login role (a unique name starting with `prefix`): its name.
    public static func newRole(_ prefix: String) throws -> String {
        guard let url else { throw ClusterError.absent }
        let name = prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(8)
        try psql(url, "CREATE ROLE \(name) LOGIN")
        return name
    }

    /// `url` with another user.
    public static func url(_ url: String, as user: String) -> String {
        var components = URLComponents(string: url)
        components?.user = user
        return components?.string ?? url
    }

    public enum ClusterError: Error { case absent, createFailed(String), psqlFailed(String) }
}
