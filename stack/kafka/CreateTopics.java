import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The local stack's Kafka administration, idempotent, as principal admin (run by stack/up.sh as a
 * single-file program): java -cp 'kafka jars' CreateTopics.java BOOTSTRAP TOPICS ACLS SECRETS [RF [MIN_ISR]]
 * Admin signs in with SASL PLAIN (its static JAAS user in server.properties), the others with SCRAM.
 * <ol>
 *   <li>SCRAM-SHA-512 credentials: every SCRAM client file SECRETS/kafka-PRINCIPAL.properties
 *       gets its password set, so a new principal or a changed password takes effect.
 *   <li>Topics: creates those of TOPICS that do not exist with RF replicas (default 1, once
 *       that many brokers are up), and brings the retention (time and bytes), cleanup policy,
 *       segment time and min.insync.replicas (MIN_ISR, when given) of those that do to what the
 *       file and MIN_ISR say. A topic with fewer replicas than RF is named, not changed.
 *   <li>ACLs: makes the cluster's ACLs exactly those of ACLS (adds the missing, removes the others).
 * </ol>
 */
public class CreateTopics {
  public static void main(String[] args) throws Exception {
    Path secrets = Path.of(args[3]);
    short replicas = args.length > 4 ? Short.parseShort(args[4]) : 1;
    String minIsr = args.length > 5 ? args[5] : null;
    try (Admin admin = Admin.create(client(secrets, args[0]))) {
      System.out.println("scram: credentials of " + scram(admin, secrets) + " principals set");
      Set<String> existing = admin.listTopics().names().get();
      List<NewTopic> wanted = new ArrayList<>();
      Map<String, Map<String, String>> configs = new HashMap<>();
      for (String[] f : lines(Path.of(args[1]))) {
        Map<String, String> c = new HashMap<>(
            Map.of("retention.ms", f[2], "retention.bytes", f[3], "cleanup.policy", f[4], "segment.ms", f[5]));
        if (minIsr != null) {
          c.put("min.insync.replicas", minIsr);
        }
        if (existing.contains(f[0])) {
          configs.put(f[0], c);
        } else {
          wanted.add(new NewTopic(f[0], Integer.parseInt(f[1]), replicas).configs(c));
        }
      }
      if (!wanted.isEmpty()) {
        awaitBrokers(admin, replicas);
        admin.createTopics(wanted).all().get();
      }
      int altered = alter(admin, configs);
      System.out.println("topics: created " + wanted.size() + " with " + replicas + " replicas, " + existing.size()
          + " existed, " + altered + " reconfigured");
      for (String t : underReplicated(admin, configs.keySet(), replicas)) {
        System.out.println("topics: " + t + " has fewer than " + replicas + " replicas (made before this profile):"
            + " a new STACK_DIR makes it anew");
      }
      System.out.println("acls: " + acls(admin, Path.of(args[2])));
    }
  }

  /** Waits (60 s at most) until the cluster has at least n brokers, so a topic of n replicas can be made. */
  static void awaitBrokers(Admin admin, int n) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    int have;
    while ((have = admin.describeCluster().nodes().get().size()) < n) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(have + " brokers up after 60 s; topics of " + n + " replicas need " + n);
      }
      Thread.sleep(500);
    }
  }

  /** The topics of names with a partition of fewer than n replicas. */
  static List<String> underReplicated(Admin admin, Collection<String> names, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (var d : admin.describeTopics(names).allTopicNames().get().values()) {
      if (d.partitions().stream().anyMatch(p -> p.replicas().size() < n)) {
        out.add(d.name());
      }
    }
    return out;
  }

  /** The non-comment lines of a whitespace-separated table. */
  static List<String[]> lines(Path file) throws Exception {
    List<String[]> out = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      String t = line.strip();
      if (!t.isEmpty() && !t.startsWith("#")) {
        out.add(t.split("\\s+"));
      }
    }
    return out;
  }

  /** A librdkafka client file (key=value lines). */
  static Properties clientFile(Path file) throws Exception {
    Properties p = new Properties();
    try (var in = Files.newBufferedReader(file)) {
      p.load(in);
    }
    return p;
  }

  /** Admin's client: SASL PLAIN over TLS, trusting the stack's CA. */
  static Properties client(Path secrets, String bootstrap) throws Exception {
    Properties creds = clientFile(secrets.resolve("kafka-admin.properties"));
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
    p.put("security.protocol", "SASL_SSL");
    p.put("ssl.truststore.type", "PEM");
    p.put("ssl.truststore.location", creds.getProperty("ssl.ca.location"));
    p.put("sasl.mechanism", "PLAIN");
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
        + creds.getProperty("sasl.username") + "\" password=\"" + creds.getProperty("sasl.password") + "\";");
    return p;
  }

  /** Sets the SCRAM-SHA-512 password of every principal that has a SCRAM client file. */
  static int scram(Admin admin, Path secrets) throws Exception {
    List<UserScramCredentialAlteration> ups = new ArrayList<>();
    try (var files = Files.newDirectoryStream(secrets, "kafka-*.properties")) {
      for (Path f : files) {
        Properties c = clientFile(f);
        if (!c.getProperty("sasl.mechanisms", "").startsWith("SCRAM-")) {
          continue;
        }
        ups.add(new UserScramCredentialUpsertion(c.getProperty("sasl.username"),
            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), c.getProperty("sasl.password")));
      }
    }
    admin.alterUserScramCredentials(ups).all().get();
    return ups.size();
  }

  /**
   * The file's lines, a line with {host} once for each host of hosts.conf beside it (the hosts
   * with an identity of their own).
   */
  static List<String[]> hostLines(Path file) throws Exception {
    Path hosts = file.resolveSibling("hosts.conf");
    List<String[]> out = new ArrayList<>();
    for (String[] f : lines(file)) {
      if (!String.join(" ", f).contains("{host}")) {
        out.add(f);
        continue;
      }
      for (String[] h : Files.exists(hosts) ? lines(hosts) : List.<String[]>of()) {
        String[] g = f.clone();
        for (int i = 0; i < g.length; i++) {
          g[i] = g[i].replace("{host}", h[0]);
        }
        out.add(g);
      }
    }
    return out;
  }

  /** Makes the cluster's ACLs those of the file; returns what changed. */
  static String acls(Admin admin, Path file) throws Exception {
    Set<AclBinding> want = new HashSet<>();
    for (String[] f : hostLines(file)) {
      // topic, group, transactionalId (Strimzi's spelling) -> TOPIC, GROUP, TRANSACTIONAL_ID
      String type = f[1].replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase();
      ResourcePattern r = new ResourcePattern(ResourceType.valueOf(type), f[3],
          PatternType.valueOf(f[2].toUpperCase()));
      want.add(new AclBinding(r, new AccessControlEntry("User:" + f[0], "*",
          AclOperation.valueOf(f[4].toUpperCase()), AclPermissionType.ALLOW)));
    }
    Collection<AclBinding> have = admin.describeAcls(AclBindingFilter.ANY).values().get();
    List<AclBinding> add = new ArrayList<>(want);
    add.removeAll(have);
    List<AclBindingFilter> remove = new ArrayList<>();
    for (AclBinding b : have) {
      if (!want.contains(b)) {
        remove.add(b.toFilter());
      }
    }
    if (!add.isEmpty()) {
      admin.createAcls(add).all().get();
    }
    if (!remove.isEmpty()) {
      admin.deleteAcls(remove).all().get();
    }
    return want.size() + " in " + file.getFileName() + ", " + add.size() + " added, " + remove.size() + " removed";
  }

  /** Sets the listed configs of existing topics where they differ; returns how many topics changed. */
  static int alter(Admin admin, Map<String, Map<String, String>> configs) throws Exception {
    List<ConfigResource> res = new ArrayList<>();
    for (String topic : configs.keySet()) {
      res.add(new ConfigResource(ConfigResource.Type.TOPIC, topic));
    }
    Map<ConfigResource, Config> current = admin.describeConfigs(res).all().get();
    Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
    for (ConfigResource r : res) {
      List<AlterConfigOp> change = new ArrayList<>();
      for (Map.Entry<String, String> e : configs.get(r.name()).entrySet()) {
        ConfigEntry now = current.get(r).get(e.getKey());
        if (now == null || !e.getValue().equals(now.value())) {
          change.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET));
        }
      }
      if (!change.isEmpty()) {
        ops.put(r, change);
      }
    }
    if (!ops.isEmpty()) {
      admin.incrementalAlterConfigs(ops).all().get();
    }
    return ops.size();
  }
}
