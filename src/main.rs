fn main() -> std::process::ExitCode {
    dumbmonit::cli::main()
}
