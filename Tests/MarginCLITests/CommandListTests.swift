import ArgumentParser
import Testing

@testable import MarginCLI

/// One table of verbs makes the command tree and says what `margin` runs itself.
@Suite struct CommandListTests {
    @Test func everyCommandIsInTheTable() {
        var tree: [any ParsableCommand.Type] = Margin.configuration.subcommands
        var index = 0
        while index < tree.count {
            tree += tree[index].configuration.subcommands
            index += 1
        }
        let listed = Set(Margin.verbs.flatMap { [$0.type] + $0.subcommands }.map { ObjectIdentifier($0) })
        #expect(Set(tree.map { ObjectIdentifier($0) }) == listed)
    }

    /// One table says what `margin` runs itself; the rest goes to `margin-full`.
    @Test func theFastExecutableRunsTheTablesVerbs() {
        #expect(
            Set(Services.commandsRunHere) == [
                "list", "show", "recent", "search", "cite", "toc", "text", "bookmark", "memo", "annotations", "edit",
                "rm", "help", "--help", "-h", "--version",
            ])
        for verb in ["add", "fetch", "serve", "export", "db", "meta", "render"] { #expect(!Services.runHere(verb)) }
        // A group's subcommands are the table's.
        for verb in Margin.verbs where !verb.subcommands.isEmpty {
            #expect(
                verb.type.configuration.subcommands.map { ObjectIdentifier($0) }
                    == verb.subcommands.map { ObjectIdentifier($0) })
        }
    }
}
