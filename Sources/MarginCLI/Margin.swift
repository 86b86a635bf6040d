import ArgumentParser
import Foundation
import MarginCore
import MarginKit

/// The `margin` command: configuration only; each verb lives in `Subcommands/`. Both
/// executables run it (`margin` and `margin-full`, see `Services`).
public struct Margin: AsyncParsableCommand {
    public init() {}

    public static var configuration: CommandConfiguration { fullConfiguration }

    private static let fullConfiguration = CommandConfiguration(
        commandName: "margin",
        abstract: "Keep a library of PDFs and everything you leave in them.",
        discussion: """
            Add PDFs by URL or path; they are cached by content (SHA-256) and saved as books with \
            title, author, page count, folder and tags. Data lives under $MARGIN_HOME (or \
            --library DIR), else under the XDG data and cache folders.

            Select a book (BOOK) by its id, a unique SHA-256 prefix (4+ hex digits) or a unique \
            part of its title. Pages are 1-based. Every command takes --json, --quiet and --library.
            """,
        version: MarginVersion.current,
        subcommands: verbs.map { $0.type as any ParsableCommand.Type }
    )

    /// `margin`'s entry: `main`, with all its work on this thread (see `OneThread`). The
    /// commands `margin` runs itself wait for one thing at a time; `margin-full`, whose server
    /// answers many requests at once, runs `main` on Swift's threads.
    public static func mainOnOneThread() {
        guard StartupTrick.oneThread.isOn else {
            // Swift's global executor, as margin-full runs: the work waits here for its end.
            let done = DispatchSemaphore(value: 0)
            Task {
                await main()
                done.signal()
            }
            done.wait()
            return
        }
        OneThread.run { await main() }
    }

    public static func main() async {
        if !StartupTrick.lazyPoppler.isOn { PDFEngines.current.loadNow() }
        let arguments = hoistGlobalOptions(Array(CommandLine.arguments.dropFirst()))
        if CommandLine.arguments.dropFirst().first == IsolatedRender.helperCommand {
            Foundation.exit(
                IsolatedRender.runHelper(
                    Array(CommandLine.arguments.dropFirst(2)), configuration: Settings.configuration))
        }
        if Services.current.isFull, CommandLine.arguments.dropFirst().first == TeamHelper.helperCommand,
            CommandLine.arguments.count == 3
        {
            Foundation.exit(await TeamHelper.serve(at: CommandLine.arguments[2]))
        }
        if CommandLine.arguments.dropFirst().first == PopplerIsolation.helperCommand {
            Foundation.exit(
                PopplerIsolation.runHelper(
                    Array(CommandLine.arguments.dropFirst(2)), configuration: Settings.configuration))
        }
        // Commands that may use the network, a team library or the reader's server run in
        // margin-full; help for them is answered here.
        if !Services.current.isFull, let verb = arguments.first,
            !Services.runHere(verb) || namesTeamLibrary(arguments),
            !arguments.contains(where: { $0 == "--help" || $0 == "-h" || $0 == "--version" })
        {
            // A team library's reading command: its helper answers it, if one runs (`TeamHelper`).
            if TeamHelper.answers(arguments), let code = TeamHelper.ask(Array(CommandLine.arguments.dropFirst())) {
                Foundation.exit(code)
            }
            Services.runFull()
        }
        var command: any ParsableCommand
        do {
            try checkCommandNames(arguments)
            command = try parseAsRoot(arguments)
        } catch let error as PlainUsageError {
            Console.error("error: \(error.message)")
            Foundation.exit(ExitCode.validationFailure.rawValue)
        } catch {
            // "-1" reads as an option to the parser; say what it is.
            if let index = arguments.firstIndex(where: { $0.count > 1 && $0.hasPrefix("-") && Double($0) != nil }),
                exitCode(for: error) == .validationFailure
            {
                let negative = arguments[index]
                let option = index > 0 && arguments[index - 1].hasPrefix("--") ? arguments[index - 1] : nil
                if let option {
                    // Joined to its option ("--limit=-1") the number parses, and the command's
                    // own validation says what the option takes ("--limit must be 0 (all) or
                    // more"); an option no validation bounds is told the usual least.
                    var joined = arguments
                    joined.replaceSubrange(index - 1...index, with: [option + "=" + negative])
                    do {
                        _ = try parseAsRoot(joined)
                    } catch {
                        exit(reporting: error)
                    }
                    Console.error("error: \(option) takes a number of at least 1, not \(negative)")
                } else {
                    Console.error("error: \(negative) is not a valid number here: pages, ids and counts start at 1")
                }
                Foundation.exit(ExitCode.validationFailure.rawValue)
            }
            exit(reporting: error)
        }
        do {
            try await run(command)
            OpenLibraries.shared.finishWriting()
            if let note = AbsentLibrary.shared.note { Console.error(note) }
            if Services.current.isFull, namesTeamLibrary(arguments) { TeamHelper.startIfAbsent(arguments) }
            Foundation.exit(0)
        } catch is NeedsFullExecutable {
            // A team library, or a PDF to fetch: nothing was written yet.
            Services.runFull()
        } catch {
            OpenLibraries.shared.finishWriting()
            exit(reporting: error, in: type(of: command))
        }
    }

    /// Runs a parsed command (ArgumentParser's own commands, such as `help`, too).
    static func run(_ command: any ParsableCommand) async throws {
        if var command = command as? AsyncParsableCommand {
            try await command.run()
        } else {
            var command = command
            try command.run()
        }
    }

    /// Prints an error as one `error: …` line (hints may follow) and exits non-zero; help and
    /// version requests print to stdout and exit 0.
    static func exit(reporting error: any Error, in command: (any ParsableCommand.Type)? = nil) -> Never {
        Foundation.exit(report(error, in: command))
    }

    /// Prints an error as `exit(reporting:in:)` does, and returns the exit status it would end with.
    static func report(_ error: any Error, in command: (any ParsableCommand.Type)? = nil) -> Int32 {
        let code = exitCode(for: error)
        if let error = error as? ExitCode {
            return error.rawValue
        }
        if code == .success {
            print(fullMessage(for: error))
            return 0
        }
        if code == .validationFailure {
            // An argument error: say it, then how to use the command.
            var usage = fullMessage(for: error).split(separator: "\n", omittingEmptySubsequences: false)
                .drop { !$0.hasPrefix("Usage:") }.joined(separator: "\n")
            if let command, let name = command.configuration.commandName {
                // Thrown while running a command: its own usage, not the root's.
                let path = commandPath(to: command) ?? name
                // Its synopsis without the names before it ("margin search").
                var synopsis = command.usageString().split(separator: " ", omittingEmptySubsequences: false)[...]
                if synopsis.first == "margin" { synopsis = synopsis.dropFirst() }
                usage =
                    "Usage: margin \(path) " + synopsis.dropFirst().joined(separator: " ")
                    + "\n  See 'margin \(path) --help' for more information."
            }
            Console.error("error: \(message(for: error))")
            if !usage.isEmpty { Console.error(usage.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return code.rawValue
        }
        Console.error("error: \(userMessage(for: error))")
        return code == .success ? 1 : code.rawValue
    }

    /// Refuses a command name that doesn't exist (also after `help`), suggesting the closest.
    static func checkCommandNames(_ arguments: [String]) throws {
        var level: [any ParsableCommand.Type] = configuration.subcommands
        var words = arguments[...]
        if words.first == "help" { words = words.dropFirst() }
        var path = ["margin"]
        var group: (any ParsableCommand.Type)?
        while let word = words.first, !word.hasPrefix("-"), !level.isEmpty {
            guard let next = level.first(where: { $0.configuration.commandName == word }) else {
                let names = level.compactMap { $0.configuration.commandName }
                let close = names.map { ($0, editDistance($0, word)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
                // A group with a default command takes other words as that command's arguments
                // ("margin import FILE.json"), unless one is a command's name mistyped.
                if group?.configuration.defaultSubcommand != nil,
                    close == nil || FileManager.default.fileExists(atPath: word)
                {
                    break
                }
                let hint = close.map { "; did you mean '\($0)'?" } ?? ""
                throw PlainUsageError(
                    message:
                        "'\(path.joined(separator: " ")) \(word)' is not a command\(hint) ('\(path.joined(separator: " ")) --help' lists them)"
                )
            }
            path.append(word)
            group = next
            level = next.configuration.subcommands
            words = words.dropFirst()
        }
        // A query that starts with a dash reads as short flags ("-alpha" as -a -l -p -h -a,
        // which would print help): searching for it needs "--" before it.
        if path == ["margin", "search"] {
            for word in words.prefix(while: { $0 != "--" })
            where word.count > 2 && word.hasPrefix("-") && !word.hasPrefix("--") && Double(word) == nil {
                throw PlainUsageError(
                    message: "\(word) reads as options; to search for it, put -- before it: margin search -- \(word)")
            }
        }
    }

    /// Lets the global options come before the verb (`margin --json list`): ArgumentParser reads
    /// them on the subcommand, so move them after the verb's name(s).
    /// Whether the command works on a library on a server (`--library URL`, else
    /// `$MARGIN_LIBRARY`): margin-full opens those, so it gets the command before anything is
    /// parsed or opened here.
    static func namesTeamLibrary(_ arguments: [String]) -> Bool {
        var named: String?
        var rest = arguments[..<(arguments.firstIndex(of: "--") ?? arguments.count)]
        while let first = rest.popFirst() {
            if first.hasPrefix("--library=") {
                named = String(first.dropFirst(10))
            } else if first == "--library", let value = rest.popFirst() {
                named = value
            }
        }
        let chosen = named ?? ProcessInfo.processInfo.environment["MARGIN_LIBRARY"].flatMap { $0.isEmpty ? nil : $0 }
        return chosen.map { LibraryLocation.serverScheme(of: $0) != nil } ?? false
    }

    static func hoistGlobalOptions(_ arguments: [String]) -> [String] {
        var hoisted = [String]()
        var rest = arguments[...]
        while let first = rest.first {
            if first == "--json" || first == "--quiet" || first.hasPrefix("--library=") {
                hoisted.append(first)
                rest = rest.dropFirst()
            } else if first == "--library", rest.count >= 2 {
                hoisted += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else {
                break
            }
        }
        guard !hoisted.isEmpty else { return arguments }
        var result = Array(rest)
        let end = result.firstIndex(of: "--") ?? result.count
        result.insert(contentsOf: hoisted, at: end)
        return result
    }
}

/// An argument error that needs no usage lines after it.
struct PlainUsageError: Error {
    var message: String
}

/// "bookmark add" for the `bookmark add` command type.
func commandPath(to target: any ParsableCommand.Type) -> String? {
    func walk(_ level: [any ParsableCommand.Type], _ path: [String]) -> String? {
        for command in level {
            guard let name = command.configuration.commandName else { continue }
            if command == target { return (path + [name]).joined(separator: " ") }
            if let found = walk(command.configuration.subcommands, path + [name]) { return found }
        }
        return nil
    }
    return walk(Margin.configuration.subcommands, [])
}

/// The number of single-character edits between two words.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    var row = Array(0...b.count)
    for i in 1...max(1, a.count) where !a.isEmpty {
        var previous = row[0]
        row[0] = i
        for j in 1...max(1, b.count) where !b.isEmpty {
            let current = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
            previous = current
        }
    }
    return row[b.count]
}
