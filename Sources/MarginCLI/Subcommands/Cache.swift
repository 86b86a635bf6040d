import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct CacheCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cache",
            abstract: "Look after the cache of PDFs: list, verify, prune, clear.",
            subcommands: Margin.subcommands(of: CacheCommand.self)
        )

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List cached files: size, which book, last used."
            )
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let entries = try await global.openLibrary().cacheList()
                try await global.show(entries) {
                    if entries.isEmpty { return global.note("the cache is empty") }
                    Console.table(
                        ["SIZE", "BOOK", "LAST USED", "FILE"],
                        entries.map {
                            [
                                formatBytes($0.bytes),
                                $0.partial
                                    ? "(partial download)"
                                    : Console.cell(
                                        $0.books.isEmpty
                                            ? "(no book)"
                                            : $0.books.joined(separator: "; ") + ($0.current ? "" : " (old version)"),
                                        width: 40),
                                $0.lastUsed ?? "-", $0.file,
                            ]
                        })
                }
            }
        }

        struct Verify: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "verify", abstract: "Rehash every cached file; restore corrupted ones from their sources.",
                discussion: """
                    A corrupted file is moved to the cache's damaged/ folder, then fetched again; \
                    the damaged copy is deleted only once a good one is back. Exits non-zero when \
                    a corrupted file could not be restored.
                    """
            )
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let report = try await global.openLibrary().cacheVerify()
                try await global.show(report) {
                    Console.out(
                        "checked \(count(report.checked, "file")): \(report.corrupt.count) corrupted, \(report.restored.count) restored"
                    )
                    report.corrupt.forEach { Console.out("  corrupted: \($0)") }
                    report.restored.forEach { Console.out("  restored: \($0)") }
                    report.kept.forEach { Console.out("  kept aside: \($0)") }
                }
                if report.restored.count < report.corrupt.count {
                    throw MarginError.io(
                        "\(count(report.corrupt.count - report.restored.count, "corrupted file")) could not be fetched again; "
                            + "the damaged copies are kept in the cache's damaged/ folder")
                }
            }
        }

        struct Prune: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "prune", abstract: "Remove cached files no book refers to, and stale partial downloads.",
                discussion: """
                    In a team library (postgres://…) also removes the PDFs stored in the database \
                    that no book or version uses (a client stopped between storing a PDF and \
                    saving its book leaves one), once they are an hour old: a younger one may \
                    belong to a book another client is adding.
                    """
            )
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let report = try await global.openLibrary().cachePrune()
                try await global.show(report) {
                    Console.out(
                        "removed \(count(report.removed.count, "file"))"
                            + (report.removedFromDatabase.isEmpty
                                ? ""
                                : " and \(count(report.removedFromDatabase.count, "stored PDF")) from the team library")
                            + ", freed \(formatBytes(report.freedBytes))")
                }
            }
        }

        struct Clear: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "clear", abstract: "Drop cached PDFs (fetched again from their sources when needed).",
                discussion: """
                    Only what can be fetched again goes: a book's current, newest version with an \
                    http(s) source. A book added from a file is stored, not cached (the file may be \
                    moved or deleted later), so it stays, as do old versions kept by 'margin refresh' \
                    and the served file of a book refreshed with --keep-old; --all --yes drops them too.
                    """
            )
            @Flag(help: "Also drop files that can't be fetched again (with --yes).") var all = false
            @Flag(help: "Confirm --all.") var yes = false
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let report = try await global.openLibrary().cacheClear(all: all, confirmed: yes)
                try await global.show(report) {
                    Console.out(
                        "removed \(count(report.removed.count, "file")), freed \(formatBytes(report.freedBytes)); kept \(count(report.kept.count, "copy", plural: "copies")) that can't be fetched again"
                            + (report.kept.isEmpty
                                ? "" : " (books added from files are stored, not cached: --all --yes drops them)")
                    )
                }
            }
        }
    }
}
