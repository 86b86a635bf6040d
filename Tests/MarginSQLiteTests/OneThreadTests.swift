import Foundation
import MarginCore
import MarginSQLite
import StoreConformance
import TestSupport
import Testing

/// `OneThread.run`, which runs every command of `margin`: the work runs to its end on the
/// calling thread, whatever wakes it, and the SQLite store works there in place.
@Suite struct OneThreadTests {
    @Test func everyJobRunsOnTheCallingThread() throws {
        let caller = pthread_self()
        let outcome = try onOneThread { () async throws -> [pthread_t] in
            var seen = [pthread_self()]
            // A continuation resumed by another thread: its job comes back here.
            let other = await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: pthread_self()) }
            }
            #expect(pthread_equal(other, caller) == 0)
            seen.append(pthread_self())
            // Child tasks, and an actor.
            async let child = pthread_self()
            seen.append(await child)
            seen += await withTaskGroup(of: pthread_t.self) { group in
                for _ in 0..<3 { group.addTask { pthread_self() } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            seen.append(await Recorder().thread())
            seen.append(pthread_self())
            #expect(OneThread.isOn)
            return seen
        }
        #expect(outcome.count == 8)
        #expect(outcome.allSatisfy { pthread_equal($0, caller) != 0 })
        #expect(!OneThread.isOn)
    }

    @Test func anErrorComesBackToTheCaller() {
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try onOneThread { () async throws -> Int in
                await Task.yield()
                throw Failure()
            }
        }
    }

    /// The store's reads and writes, made in place on one thread (not on GRDB's queues).
    @Test(arguments: StoreConformance.names)
    func everyStoreCheckPassesOnOneThread(_ check: String) throws {
        let folder = TemporaryFolder()
        let caller = pthread_self()
        let endedHere = try onOneThread { () async throws -> Bool in
            try await StoreConformance.run(check, on: try LibraryDatabase(path: folder.path + "/library.sqlite"))
            return OneThread.isOn && pthread_equal(pthread_self(), caller) != 0
        }
        #expect(endedHere)
    }
}

private actor Recorder {
    func thread() -> pthread_t { pthread_self() }
}

/// Runs `body` with `OneThread.run` from this thread: what it returned, or what it threw.
private func onOneThread<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    OneThread.run {
        do {
            outcome.result = .success(try await body())
        } catch {
            outcome.result = .failure(error)
        }
    }
    guard let result = outcome.result else {
        Issue.record("OneThread.run returned before its work ended")
        throw CancellationError()
    }
    return try result.get()
}

/// Written on the thread that reads it (the work ends before `run` returns).
private final class Outcome<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
