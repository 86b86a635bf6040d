import ArgumentParser
import Foundation
import MarginKit

extension Margin {
    struct DB: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "db",
            abstract: "Inspect the library database.",
            subcommands: [Status.self, Check.self])

        struct Status: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "status",
                abstract: "Show the schema version, pending migrations, counts and paths.")

            @OptionGroup var global: GlobalOptions

            func run() throws {
                let status = try global.openLibrary().status()
                if global.json { return try Console.json(status) }
                Console.out("database  \(status.database) (\(formatBytes(status.databaseBytes)))")
                Console.out("cache     \(status.cache)")
                Console.out("schema    version \(status.schema.version) of \(status.schema.latest)")
                Console.out("pending   \(status.schema.pending.isEmpty ? "none" : status.schema.pending.joined(separator: ", "))")
                for (name, count) in status.counts.sorted(by: { $0.key < $1.key }) {
                    Console.out(name.padding(toLength: 10, withPad: " ", startingAt: 0) + String(count))
                }
            }
        }

        struct Check: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "check",
                abstract: "Check the database's integrity and that every book's PDF is cached intact.",
                discussion: "Exits non-zero when a problem is found.")

            @OptionGroup var global: GlobalOptions

            func run() throws {
                let check = try global.openLibrary().check()
                if global.json {
                    try Console.json(check)
                } else {
                    Console.out("integrity     \(check.integrity.joined(separator: "; "))")
                    Console.out("foreign keys  \(check.foreignKeyViolations.isEmpty ? "ok" : "\(check.foreignKeyViolations.count) broken")")
                    for line in check.foreignKeyViolations { Console.out("  \(line)") }
                    Console.out("cached files  \(check.missingFiles.isEmpty && check.corruptFiles.isEmpty ? "ok" : "problems")")
                    for line in check.missingFiles { Console.out("  missing: \(line) (run 'margin path' to fetch it again)") }
                    for line in check.corruptFiles { Console.out("  corrupt: \(line)") }
                }
                if !check.ok {
                    throw MarginError.io("the library has problems (see above)")
                }
            }
        }
    }
}
