package org.cpi2.flink;

/**
 * The jar's entry point. Answers {@code --help} and {@code --version} (the jar manifest's
 * Implementation-Version, the project's) without Flink on the class path (Flink is provided by the
 * cluster), otherwise runs {@link Cpi2Job}.
 */
public final class Cpi2Main {
  private Cpi2Main() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--version")) {
      String v = Cpi2Main.class.getPackage().getImplementationVersion();
      System.out.println("cpi2-flink-jobs " + (v == null ? "unknown" : v));
      return;
    }
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println("Usage: Cpi2Job [--config FILE] [--name value ...]");
      System.out.println(
          "Submit with `make -C flink-jobs submit` (Flink REST API). Options and defaults:");
      System.out.print(Cpi2Options.defaults().describe());
      System.out.println(
          "The loader (entry class org.cpi2.loader.LoaderJob: every topic into ClickHouse), options and defaults:");
      System.out.print(Cpi2Options.loaderDefaults().describe());
      return;
    }
    Cpi2Job.main(args);
  }
}
