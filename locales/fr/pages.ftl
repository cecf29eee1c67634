# Les pages : vue d'ensemble, panneau Cluster, formulaire du cluster, modifications, refus, dans
# les mots du guide. Les arguments sont échappés par les pages (maud), jamais ici.

nav-clusters = Clusters
colon = {"\u00A0: "}
never = jamais
ago = { $unit ->
    [now] à l’instant
    [s] il y a { $n } s
    [min] il y a { $n } min
    [h] il y a { $n } h
   *[days] il y a { $n } jours
}
not-found = Introuvable
refused = Non autorisé
refused-not-admin = Ajouter, modifier et retirer des clusters demande le rôle admin.
not-saved = Non enregistré.

## La vue d'ensemble
overview-title = Clusters
count-clusters = { $count } { $count ->
    [one] cluster
   *[other] clusters
}
count-status = { $count } { $status ->
    [unreachable] injoignable
    [critical] critique
    [notice] avis
    [waiting] en attente
   *[ok] ok
}
filter-name =
    .placeholder = le nom du cluster contient
    .label = Le nom du cluster contient
filter = Filtrer
col-cluster = Cluster
col-status = État
col-nodes-ready = Nœuds prêts
col-pods = Pods
col-firing = Alertes déclenchées
col-last-good = Dernier cycle réussi
cannot-be-read = Illisible
no-cluster = Aucun cluster n’est configuré.
no-cluster-matches = Aucun cluster ne correspond.
add-cluster = Ajouter un cluster
replicas-title = Réplicas
replica-me = Ce réplica, { $name }, lit { $owned } des { $known } clusters qu’il connaît.
replica-other = { $name } lit { $count } clusters :
replica-unknown = Connus des autres réplicas seulement (absents du fichier de ce réplica) : { $names }
replicas-freshness = Selon la base au dernier renouvellement des baux (toutes les { $seconds } s).
silences-link = Silences et maintenance
page-of = Page { $page } sur { $pages }
previous = précédente
next = suivante

## Le panneau Cluster
version-unknown = version inconnue
last-cycle = dernier cycle
added-on-pages = Ajouté sur les pages
edit-or-remove = Modifier ou retirer
from-file = Du fichier de configuration (modifié là, pas sur les pages)
through-agent = Lu par son agent · dernier rapport
in-maintenance = en maintenance jusqu’au { $until }
nothing-notified = rien de ce cluster n’est notifié
cannot-be-read-sentence = Illisible.
last-good-data = Les données ci-dessous sont les dernières bonnes données, de { $time } ({ $ago }).
never-read = Aucun cycle n’a encore lu ce cluster.
silence-all = Faire taire toutes ses alertes…
and-more = et { $count } de plus
more-nodes = et { $count } { $count ->
    [one] autre nœud
   *[other] autres nœuds
} Ready, sans pression
more-reasons = et { $count } autres raisons
nodes-title = Nœuds
col-node = Nœud
col-pressure = Pression
col-scheduling = En cordon
col-kubelet = Version kubelet
col-why = Pourquoi
cordoned = en cordon
pods-title = Pods qui ont besoin d’attention ({ $count })
col-pod = Pod
col-state = État
col-restarts = Redémarrages
workloads-title = Workloads avec des répliques manquantes ({ $count })
col-workload = Workload
col-unavailable = Indisponibles
rollouts-title = Déploiements bloqués ({ $count })
col-updated = À jour
claims-title = Demandes de volume bloquées ({ $count })
col-claim = Demande
events-title = Événements d’avertissement de la dernière heure, par raison
alerts-title = Alertes ({ $count })
col-alert = Alerte
col-severity = Sévérité
col-object = Objet
col-summary = Résumé
col-since = Depuis
alert-firing = déclenchée
alert-pending = en attente
silence-one = Faire taire…
acknowledge-one = Prendre en compte…
acknowledged-by = prise en compte par { $by } le { $at }
silenced-until = réduite au silence jusqu’au { $until } par { $by }
silenced-by = réduite au silence par { $by }

## Le formulaire du cluster
edit-cluster = Modifier { $name }
form-name = Nom
form-names = Noms
form-through-agent = Lu par son agent : l’agent détient les paramètres de connexion, et garde son jeton.
form-address = Adresse de l’API server
form-token = Jeton de compte de service
    .keep = laisser vide pour garder le jeton actuel
    .kept-while = Le jeton enregistré n’est gardé que tant que l’adresse, le port, la CA et le choix du certificat restent les mêmes ; quand l’un change, saisissez à nouveau le jeton.
form-ca = Certificat CA du cluster
    .formats = (base64 ou PEM)
form-insecure = Accepter un certificat non vérifiable
form-watch = Suivre par watch (list-then-watch ; demande le verbe watch : dumbmonit rbac --watch)
form-timeout = Délai par requête
    .range = (de 100ms à 10m)
form-ignored = Namespaces ignorés
form-namespaces = Seulement ces namespaces (accès par namespace ; vide : tout le cluster)
form-interval = Intervalle
    .range = (de 1s à 24h)
form-test = Tester
form-save = Enregistrer
form-remove = Retirer { $name }
form-agent-title = Ou le lire par un agent
form-agent-why = Pour un cluster que ce serveur ne peut pas joindre : un agent dans le cluster le lit et pousse chaque cycle ici. Ceci crée le jeton de l’agent et affiche, une seule fois, la commande à lancer dans le cluster.
form-agent-create = Créer le jeton de l’agent
tested-read = Le cluster a été lu.
tested-nothing-saved = Rien n’est enregistré avant Enregistrer.
tested-failed = Le test a échoué.

## Les modifications faites sur les pages
audit-page = Modifications
audit-title = Modifications faites sur les pages
audit-none = Aucune modification pour l’instant.
col-when = Quand
col-who = Qui
col-what = Quoi

## Ce que disent les lectures facultatives
certificate-expires-on = { certificate-what } expire le { $date } ({ in-days }).
jobs-title = Jobs en échec ({ $count })
cronjobs-title = Cron jobs qui ont manqué leurs exécutions ({ $count })
col-schedule = Planning
apiservices-title = API agrégées indisponibles
col-reason = Raison
col-message = Message
not-available = indisponible
hpas-title = Autoscalers ({ $count })
col-replicas-max = Répliques / max
hpa-at-max = à maxReplicas
hpa-cannot-scale = ne peut pas mettre à l’échelle
pdbs-title = Budgets de perturbation à court de pods sains ({ $count })
col-healthy = Sains / exigés
col-allowed = Perturbations permises
quotas-title = Quotas utilisés à 90 % ou plus ({ $count })
col-resource = Ressource
col-used = Utilisé / limite
quota-almost = presque plein
quota-full = plein : ce qui en demande plus est refusé
quota-exceeded = au-delà de sa limite
volumes-title = Volumes en erreur ({ $count })
col-phase = Phase
hpa-mismatch = en deçà des { $desired } voulues
not-granted = Non accordé à ce compte de service
    .optional = facultatif ;
    .adds = les ajoute
optional-failed = Une lecture facultative a échoué
watch-not-granted = watch n’est pas accordé : lu à chaque intervalle
    .grants = l’accorde

## Demandes et limites
capacity-title = Demandes et limites face à l’allouable
capacity-busy-title = Nœuds surengagés ou demandés à 90 % ({ $count })
allocatable-unknown = allouable inconnu
col-cpu-used = CPU utilisé
    .bar = CPU utilisé
col-memory-used = Mémoire utilisée
    .bar = mémoire utilisée
col-cpu-requests = Demandes CPU
    .bar = demandes CPU
col-cpu-limits = Limites CPU
    .bar = limites CPU
col-memory-requests = Demandes mémoire
    .bar = demandes mémoire
col-memory-limits = Limites mémoire
    .bar = limites mémoire
col-overcommit = Surengagement
usage-bar = { $what } : { $percent } % de l’allouable

## Historique
history-24h = Historique, dernières 24 heures
history-7d = Historique, 7 derniers jours
range-24h = 24 heures
range-7d = 7 jours
chart-nodes = Nœuds prêts
chart-pods = Pods par état
chart-crashlooping = Pods en boucle de crash
chart-events = Événements d’avertissement de la dernière heure
chart-no-data = pas encore de données
series-nodes = nœuds
series-ready = prêts
series-running = en cours
series-pending = en attente
series-failed = en échec
series-crash-looping = en boucle de crash
series-warning-events = événements d’avertissement
sparkline = redémarrages sur 24 heures
    .range = redémarrages sur 24 heures : de { $min } à { $max }

demo-banner = Cluster simulé : ceci est la démo de DumbMonit, aucun vrai cluster n’est surveillé.

## Silences, fenêtres de maintenance, prises en compte
q-silences = Silences
q-silence = Silence
q-home = Les silences vivent dans l’Alertmanager { $name } : ceux faits ici y sont faits, et ceux faits là-bas (son interface, amtool, une autre réplique) valent ici aussi.
q-home-unread = Les silences d’Alertmanager ne peuvent pas être lus.
    .kept = Les silences lus en dernier restent en vigueur.
q-no-silence = Aucun silence.
q-page = { $from }–{ $to } sur { $total }
q-previous = ‹ précédents
q-next = suivants ›
q-not-applied-title = Silences d’Alertmanager non appliqués
q-not-applied = Non appliqué : trop coûteux ({ $why })
q-col-matchers = Matchers
q-col-until = Jusqu’au
q-col-by = Par
q-col-comment = Commentaire
q-col-clusters = Clusters
q-state-pending = à venir
q-state-active = actif
q-state-expired = expiré
q-state-scheduled = planifiée
q-no-end = sans fin
q-from-file = du fichier de configuration
q-edit = Modifier
q-expire = Expirer
q-new-silence = Nouveau silence
q-windows = Fenêtres de maintenance
q-no-window = Aucune fenêtre de maintenance.
q-for = pendant
q-end = Terminer
q-new-window = Nouvelle fenêtre de maintenance
q-maintenance = Maintenance
q-matchers = Matchers, un par ligne (syntaxe d’Alertmanager : name="value", name=~"regex", != et !~)
q-for-how-long = Durée (à partir de maintenant : 2h, 90m, 1d)
q-everything = Faire taire toutes les alertes qu’ils sélectionnent, même s’ils sélectionnent toutes les alertes de tous les clusters
q-silence-until = Silence jusqu’au { $until }
q-new-end = Sa nouvelle fin est comptée à partir de maintenant.
q-no-such-silence = Aucun silence { $id } fait sur les pages ou par l’API.
q-not-expired = Non expiré
q-no-such-alert = Aucune alerte { $print } en ce moment.
q-acknowledge = Prendre en compte
    .meaning = Quelqu’un s’en occupe : elle n’est ni escaladée ni renotifiée ; la prise en compte finit quand l’alerte se résout. Les autres alertes sont notifiées comme d’habitude.
q-not-acknowledged = Non prise en compte
q-window-cluster = Cluster (un nom, ou des clusters : {"{"}cluster=~"edge-.*"{"}"})
q-window-kinds = Ponctuelle : un début et une fin (RFC 3339, par exemple 2026-12-06T02:00:00+01:00). Récurrente : un planning cron, son fuseau horaire et sa durée.
q-window-start = Début
q-window-end = Fin
q-window-schedule = Planning (cron : minute heure jour-du-mois mois jour-de-la-semaine)
q-window-time-zone = Fuseau horaire (par exemple Europe/Paris ; UTC si vide)
q-window-duration = Durée (2h, 90m)
q-not-ended = Non terminée

## Pourquoi une modification sur les pages est refusée, ou ce qui a été saisi n'est pas gardé
name-rule = jusqu’à 100 lettres (a-z, A-Z), chiffres, « - », « _ » et « . », sans commencer par « - », pas seulement des points, et pas « new »
form-error-read-only = Cette surveillance est en lecture seule : les clusters s’ajoutent dans son fichier de configuration. Pour les ajouter ici, nommez des admins dans la section [auth.admin] du fichier (bearer_token_file, ou username avec password_hash), puis rechargez.
form-error-no-secret-key = La clé secrète (secret_key_file) n’a pas pu être lue ni créée, donc les jetons ne peuvent pas être gardés ; le journal du serveur dit pourquoi.
form-error-not-admin = Ajouter, modifier et retirer des clusters demande le rôle admin.
form-error-not-this-session = Ce formulaire n’est pas de cette session (ou il a expiré). Rouvrez la page et envoyez-le depuis elle.
form-error-from-the-file = Le cluster { $name } vient du fichier de configuration : il se modifie là, pas sur les pages.
form-error-not-added = Aucun cluster nommé { $name } n’a été ajouté sur les pages.
form-error-not-removed = Non retiré : { $error }
form-error-name = Nom : { $rule }
form-error-name-taken = Nom : un cluster nommé { $name } est déjà surveillé
form-error-port = Port : un nombre de 1 à 65535 est attendu
form-error-namespace = Namespaces : { $value } n’est pas un nom de namespace (lettres minuscules, chiffres et « - », au plus 63, commençant et finissant par une lettre ou un chiffre)
form-error-too-many-namespaces = Namespaces : { $count } namespaces ; un cluster est lu dans { $most } au plus (lisez plutôt le cluster entier)
form-error-namespaces-with-watch = Namespaces : l’accès par namespace est lu à chaque intervalle, pas suivi par watch : décochez l’un des deux
form-error-no-address = Adresse : l’adresse de l’API server est nécessaire, par exemple https://k3s.lan:6443
form-error-address = Adresse : { $error }
form-error-duration = { $field } : une durée de { $range } est attendue, comme 10s, 1m ou 30
form-error-no-token-to-test = Jeton de compte de service : collez le jeton avec lequel tester
form-error-no-token-to-save = Jeton de compte de service : collez le jeton avec lequel le cluster est lu
form-error-token-again = Jeton de compte de service : l’adresse, le port, la CA ou le choix du certificat ont changé, donc le jeton gardé n’est pas envoyé : saisissez à nouveau le jeton
form-error-unsealable = Le jeton gardé ne peut pas être descellé : collez à nouveau le jeton
form-error-no-action = Choisissez Tester ou Enregistrer

## Le jeton d’un agent, montré une fois
agent-for = Agent pour { $name }
agent-run-this = Lancez ceci là où kubectl joint le cluster. Le jeton y est et n’est montré que maintenant : il est gardé scellé, et aucune page ne le remontre.
agent-page = La page du cluster
    .says = dit quand le premier rapport de l’agent arrive.

## L’aide à côté d’une erreur du bouton Tester, d’après la section « Dépannage » du guide
help-unauthorized = Un jeton fait avec { $create } expire (après une heure par défaut) : utilisez le jeton du Secret que { $rbac } crée, la forme longue durée : { $get }.
help-forbidden = Le ClusterRole ou sa liaison manque ou est incomplet. Le message nomme la ressource que le serveur d’API a refusée ; appliquez à nouveau le manifeste : { $apply } (et { $optional } pour les lectures facultatives).
help-unknown-authority = La CA manque, ou ce n’est pas celle qui a signé le certificat de l’API server. Collez-la comme Certificat CA du cluster : la valeur base64 de { $file } du Secret du jeton ({ $get }), ou sur k3s { $k3s }.
help-wrong-name = L’adresse { $host } n’est pas un des noms dans le certificat du serveur, qui liste { $names }. Utilisez-en un, ou ajoutez un autre nom avec { $flag } (dans { $config } : { $yaml }) et redémarrez k3s.
help-certificate-expired = Le certificat de l’API server a expiré ou n’est pas encore valide : vérifiez les horloges, et renouvelez le certificat (k3s renouvelle à son redémarrage ceux qui expirent dans les 90 jours).
help-unreachable = Vérifiez l’adresse et le port (6443 par défaut), et que ce serveur peut joindre l’API server.

## Les règles telles qu’elles s’appliquent
rules-title = Règles
runbooks-title = Runbooks
rules-intro = Chaque règle intégrée, son délai, sa sévérité et ce qu’elle lit, et les entrées [[rule]] du fichier en vigueur pour elle (la première dont les matchers correspondent à une alerte s’y applique).
rules-col-for = Délai
rules-col-reads = Lit
rules-col-overrides = Réglée par le fichier
rules-off = désactivée
rules-for = délai { $for }
rules-escalate = avertissement après { $after }
rules-every-alert = toutes les alertes
rules-at-once = immédiat

## La page des notificateurs
notifiers-title = Notificateurs
notifiers-none = Aucun notificateur : les alertes sont montrées ici et dites à personne.
col-notifier = Notificateur
col-type = Type
col-where = Où
col-told = Reçoit
col-sent = Envoyées
col-failed = Échouées
col-refused = Refusées
notifiers-told-all = toutes les alertes (il les aiguille lui-même)
notifiers-told-rest = ce que les filtres d’aucun notificateur ne prennent
notifiers-told-severity = { $severity } et au-delà
notifiers-each-change = chaque changement à part
notifiers-grouped = groupées par { $labels }, redites toutes les { $every }
notifiers-grouped-once = groupées par { $labels }, sans rappel
notifiers-test = Envoyer une notification d’essai
notifiers-test-ok = { $name } a pris la notification d’essai : { $answer }
notifiers-test-failed = { $name } n’a pas pris la notification d’essai : { $error }
notifiers-no-such = Aucun notificateur ne s’appelle { $name }.
