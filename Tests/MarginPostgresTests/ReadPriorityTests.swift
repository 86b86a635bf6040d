import Foundation
import MarginCore
import TestSupport
import Testing

@testable import MarginPostgres

/// A library's reads run on threads 3 steps of niceness below its writes' (`ReadPriority`), on
/// whichever connection they lease; the writes' stay as the process is.
@Suite struct ReadPriorityTests {
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func readsYieldTheProcessorToWrites() async throws {
        let database = try PostgresLibraryDatabase(url: try TestCluster.freshDatabase(), connections: 2)
        @Sendable func nice() -> Int32 {
            errno = 0
            return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        }
        let process = nice()
        // Several at once, so that the pool's connections (and their threads) serve some.
        @Sendable func nices(_ count: Int, reading: Bool) async throws -> [Int32] {
            try await withThrowingTaskGroup(of: Int32.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        @Sendable func body() -> Int32 {
                            Thread.sleep(forTimeInterval: 0.05)
                            return nice()
                        }
                        return reading
                            ? try await database.repository.read { _ in body() }
                            : try await database.repository.write { _ in body() }
                    }
                }
                return try await group.reduce(into: [Int32]()) { $0.append($1) }
            }
        }
        async let reads = nices(6, reading: true)
        async let writes = nices(4, reading: false)
        let (read, written) = try await (reads, writes)
        #expect(read == Array(repeating: min(19, process + ReadPriority.steps), count: 6), "\(read)")
        #expect(written == Array(repeating: process, count: 4), "\(written)")
        #expect(nice() == process, "this thread as it was")
    }
}
