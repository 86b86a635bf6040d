import Foundation
import MarginCore

/// Poppler's work on a PDF from outside runs in a child process with a time and a memory limit:
/// a small PDF can be built to make a reader work without end (form XObjects that fan out), and
/// it must cost the user an error, not a hung command or the machine's memory.
///
/// The child is this same executable, started with `helperCommand` as its first argument; the
/// CLI names itself in `Configuration.extractionHelper` (tests of the library alone extract in
/// process).
public enum PopplerIsolation {
    public static let helperCommand = "__extract-text"

    /// Runs in the child: extracts the text and writes each page as a 4-byte length and its
    /// UTF-8 bytes on stdout. The password, if any, is the first line of stdin.
    public static func runHelper(_ arguments: [String], configuration: Configuration) -> Int32 {
        let memoryLimit = configuration.popplerMemoryLimit
        var limit = rlimit(rlim_cur: rlim_t(memoryLimit), rlim_max: rlim_t(memoryLimit))
        setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
        // The work is for the parent alone: when it is gone (Ctrl-C, a kill), stop.
        let parent = getppid()
        Thread.detachNewThread {
            while getppid() == parent { usleep(200_000) }
            _exit(3)
        }
        guard arguments.count == 2, let pages = Int(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: margin \(helperCommand) PATH PAGES\n".utf8))
            return 2
        }
        let input = FileHandle.standardInput.readDataToEndOfFile()
        let line = String(decoding: input, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first
            .map(String.init)
        let password = line.flatMap { $0.isEmpty ? nil : $0 }
        do {
            let extracted = try TextExtractor.extractInProcess(
                path: arguments[0], password: password, pageCount: pages, workers: configuration.extractWorkers)
            var output = Data()
            for page in extracted.pages {
                let bytes = Data(page.text.utf8)
                var length = UInt32(bytes.count).littleEndian
                output.append(Data(bytes: &length, count: 4))
                output.append(bytes)
                if output.count > 1 << 20 {
                    FileHandle.standardOutput.write(output)
                    output.removeAll(keepingCapacity: true)
                }
            }
            FileHandle.standardOutput.write(output)
            return 0
        } catch {
            FileHandle.standardError.write(Data(error.localizedDescription.utf8))
            return 1
        }
    }

    /// Runs the helper on `path` and reads the pages back.
    static func extract(
        helper: String, path: String, password: String?, pageCount: Int, configuration: Configuration
    ) throws -> ExtractedText {
        let memoryLimit = configuration.popplerMemoryLimit
        let child = try Child(helper, [helperCommand, path, String(pageCount)])
        child.send(Data(((password ?? "") + "\n").utf8))
        let limit = configuration.popplerTimeLimit(pages: pageCount)
        let timedOut = WriteFlag()
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + limit)
        timer.setEventHandler {
            timedOut.set()
            kill(child.pid, SIGKILL)
        }
        timer.resume()
        let (data, errorData, status) = child.finish()
        timer.cancel()
        if timedOut.isSet {
            throw MarginError.popplerLimit(
                "poppler took longer than \(Int(limit)) s to read its text (a PDF built to exhaust readers?)")
        }
        guard status.exited, status.code == 0 else {
            let message = String(decoding: errorData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !status.exited || message.isEmpty {
                throw MarginError.popplerLimit(
                    "poppler stopped while reading its text (\(status.exited ? "exit \(status.code)" : "signal \(status.code)"); "
                        + "memory limit \(memoryLimit >> 20) MB)")
            }
            throw MarginError.io(message)
        }
        var pages = [PageText]()
        pages.reserveCapacity(pageCount)
        var offset = 0
        while offset + 4 <= data.count, pages.count < pageCount {
            let length = data[offset..<offset + 4].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            offset += 4
            guard offset + length <= data.count else { break }
            pages.append(
                PageText(
                    bookId: 0, number: pages.count + 1,
                    text: String(decoding: data[offset..<offset + length], as: UTF8.self)))
            offset += length
        }
        guard pages.count == pageCount else {
            throw MarginError.popplerLimit("the text extractor returned \(pages.count) of \(pageCount) pages")
        }
        return ExtractedText(pages: pages)
    }
}

/// A child process started with `posix_spawn`, its stdin, stdout and stderr on pipes, reaped
/// with `waitpid` (Foundation's Process waits in steps of tens of milliseconds, which a child per
/// book would pay each time).
private final class Child: @unchecked Sendable {
    static let spawning = NSLock()
    let pid: pid_t
    private let input: Int32
    private let output: Int32
    private let errors: Int32

    init(_ executable: String, _ arguments: [String]) throws {
        var inPipe: [Int32] = [0, 0]
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        // A child spawned meanwhile for another book must not hold these pipes open: spawns take
        // turns, and the pipes are close-on-exec (the copies made for the child are not).
        Child.spawning.lock()
        defer { Child.spawning.unlock() }
        guard pipe(&inPipe) == 0, pipe(&outPipe) == 0, pipe(&errPipe) == 0 else {
            throw MarginError.io("cannot start the text extractor: \(String(cString: strerror(errno)))")
        }
        for descriptor in inPipe + outPipe + errPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        for descriptor in inPipe + outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, descriptor) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, environ)
        close(inPipe[0])
        close(outPipe[1])
        close(errPipe[1])
        guard result == 0 else {
            [inPipe[1], outPipe[0], errPipe[0]].forEach { close($0) }
            throw MarginError.io("cannot start the text extractor \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        input = inPipe[1]
        output = outPipe[0]
        errors = errPipe[0]
    }

    /// Writes `data` to the child's stdin and closes it.
    func send(_ data: Data) {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(input, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        close(input)
    }

    /// Reads stdout and stderr to their ends, then reaps the child.
    func finish() -> (output: Data, errors: Data, status: (exited: Bool, code: Int32)) {
        let errorText = ErrorText()
        let group = DispatchGroup()
        group.enter()
        let errors = self.errors
        DispatchQueue.global().async {
            errorText.set(readAll(errors))
            group.leave()
        }
        let data = readAll(output)
        group.wait()
        close(output)
        close(errors)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return (data, errorText.get(), signal == 0 ? (true, (status >> 8) & 0xff) : (false, signal))
    }
}

/// Everything a descriptor gives until its end.
private func readAll(_ descriptor: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        data.append(buffer, count: count)
    }
    return data
}

private final class ErrorText: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}

/// A time limit on poppler work done in this process (rendering a page, placing highlights,
/// writing an annotated PDF): past it, the command ends with one error line instead of running
/// for ever. Files being written are temporaries, removed by the next run.
enum PopplerWatchdog {
    static func limit(_ what: String, pages: Int = 1, configuration: Configuration, _ work: () throws -> Void) rethrows
    {
        let seconds = configuration.popplerTimeLimit(pages: pages)
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + seconds)
        timer.setEventHandler {
            FileHandle.standardError.write(
                Data(
                    "error: poppler took longer than \(Int(seconds)) s to \(what) (a PDF built to exhaust readers?); nothing was changed\n"
                        .utf8))
            Interruption.exit(1)
        }
        timer.resume()
        defer { timer.cancel() }
        try work()
    }
}
