import ArgumentParser
import Testing

@testable import MarginCLI

/// `Margin.run` finds a parsed command's type in `Margin.asyncCommands` instead of asking the
/// runtime whether it is an `AsyncParsableCommand`; a command missing from the list would still
/// run (through that question), only slower, so the list is checked against the command tree.
@Suite struct CommandListTests {
    @Test func everyCommandIsListed() {
        var tree: [any ParsableCommand.Type] = [Margin.self]
        var index = 0
        while index < tree.count {
            tree += tree[index].configuration.subcommands
            index += 1
        }
        let listed = Set(Margin.asyncCommands.map { ObjectIdentifier($0) })
        let missing = tree.filter { !listed.contains(ObjectIdentifier($0)) }.map { String(reflecting: $0) }
        #expect(missing == [])
        #expect(tree.count == Margin.asyncCommands.count)
        #expect(listed.count == Margin.asyncCommands.count)
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
