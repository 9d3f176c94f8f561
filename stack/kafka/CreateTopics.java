import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Creates the topics listed in topics.conf that do not exist yet (idempotent). Run by
 * stack/up.sh as a single-file program: java -cp 'kafka jars' CreateTopics.java BOOTSTRAP FILE
 */
public class CreateTopics {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
    try (Admin admin = Admin.create(p)) {
      Set<String> existing = admin.listTopics().names().get();
      List<NewTopic> wanted = new ArrayList<>();
      for (String line : Files.readAllLines(Path.of(args[1]))) {
        String t = line.strip();
        if (t.isEmpty() || t.startsWith("#")) {
          continue;
        }
        String[] f = t.split("\\s+");
        if (existing.contains(f[0])) {
          continue;
        }
        wanted.add(new NewTopic(f[0], Integer.parseInt(f[1]), (short) 1)
            .configs(Map.of("retention.ms", f[2], "cleanup.policy", f[3])));
      }
      if (!wanted.isEmpty()) {
        admin.createTopics(wanted).all().get();
      }
      System.out.println("topics: created " + wanted.size() + ", " + existing.size() + " existed");
    }
  }
}
