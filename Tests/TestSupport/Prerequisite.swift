import Foundation
import Testing

/// A test's prerequisite that the test command installs or starts (PostgreSQL, the browsers,
/// curl, pandoc, the corpus beside the clone). Where it is missing the test is skipped, except
/// under `MARGIN_REQUIRE_PREREQUISITES=1` (CI's `.ci/run` sets it): there a missing
/// prerequisite is a failure, so that nothing CI should test is skipped in silence.
public enum Prerequisite {
    /// Whether a missing prerequisite fails its tests instead of skipping them.
    public static let required = ProcessInfo.processInfo.environment["MARGIN_REQUIRE_PREREQUISITES"] == "1"

    /// The trait for a test that needs `available`: `comment` says what and who provides it.
    public static func needs(_ available: Bool, _ comment: Comment) -> any TestTrait {
        if available || !required { return ConditionTrait.enabled(if: available, comment) }
        return Missing(comment: comment)
    }

    /// Fails the test it is on, saying what is missing, without running its body.
    public struct Missing: TestTrait, TestScoping {
        let comment: Comment

        public func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            Issue.record(
                "a prerequisite the test command provides is missing (\(comment)); MARGIN_REQUIRE_PREREQUISITES=1 makes that a failure"
            )
        }
    }
}
